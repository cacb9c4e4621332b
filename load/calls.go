package load

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "github.com/locklab/locklab/proto/locklab/v1"
)

// plan is what every caller of a run shares, read-only: the workload's
// settings resolved from Config, workloads.json and the server's GetStats.
type plan struct {
	cfg   Config
	calls calls    // the workload's row of workloadCalls
	cases []string // the workload's cases; result.caseIdx indexes it
	drawn []bool   // drawn[i]: the run can draw cases[i] (by_case lists those)
	// storeBacked: the server keeps state (GetStats.store_backed), so the
	// answers' bodies are checked; noop's empty answers are not.
	storeBacked bool

	// counter
	delta     int64
	increment *frame
	// bank
	mix               mix
	accounts          *Zipf // ranks 0..N-1 are accounts 1..N
	pairs             *Zipf // ranks 0..N-2: the second account of a transfer
	refusalExpected   bool
	amount            int64
	oneAccount        uint32
	historyLimit      uint32
	reportedReadRatio float64
	// kv
	readRatio     float64
	value         []byte
	valueField    []byte // PutRequest{Value: value}, encoded: the second part of every Put's frame
	keysPerCaller int
	sharedKeys    *Zipf // nil: each caller owns its keys (Skew 0)
	kvGet, kvPut  int   // the cases' indexes
	// sharedGet[rank], sharedPut[rank]: the shared keys' requests
	sharedGet, sharedPut []*frame
}

// mix is a Mix with its cases as indexes into plan.cases.
type mix struct {
	Mix
	idx []int
}

func (m mix) pick(u float64) int {
	acc := 0.0
	for i, e := range m.Mix {
		acc += e.Share
		if u < acc {
			return m.idx[i]
		}
	}
	return m.idx[len(m.idx)-1]
}

// setup does what k6's setup() does: resets the server if asked, learns from
// GetStats whether answers carry state and how many accounts there are, and
// for a skewed kv run puts the shared keys once, so every Get finds its key.
func setup(ctx context.Context, cfg Config, d *Definitions, c clients) (*plan, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if cfg.Reset {
		sc, _ := ResetScenario(cfg.Scenario)
		_, err := c.admin.Reset(ctx, &pb.ResetRequest{
			Scenario: sc, Accounts: uint32(cfg.Accounts), InitialBalance: d.Bank.Defaults.Balance,
		})
		if err != nil {
			return nil, fmt.Errorf("load: AdminService/Reset: %w", err)
		}
	}
	st, err := c.admin.GetStats(ctx, &pb.GetStatsRequest{})
	if err != nil {
		return nil, fmt.Errorf("load: AdminService/GetStats: %w", err)
	}
	p := &plan{
		cfg: cfg, cases: d.Cases(cfg.Workload), storeBacked: st.GetStoreBacked(),
		reportedReadRatio: -1,
	}
	p.drawn = make([]bool, len(p.cases))
	w, ok := workloadCalls[cfg.Workload]
	if !ok {
		return nil, fmt.Errorf("load: the Go driver has no calls for workload %q", cfg.Workload)
	}
	p.calls = w
	if err := w.setup(ctx, p, d, st, c); err != nil {
		return nil, err
	}
	return p, nil
}

// calls is how the Go driver runs one workload of workloads.json: a row of
// workloadCalls. The workload's cases and parameters are in its row of
// workloads.json; these are the calls that draw them.
type calls struct {
	// setup resolves the plan's part of the workload (what it draws, from
	// Config, the definitions and the server's GetStats) and marks the
	// cases the run can draw.
	setup func(ctx context.Context, p *plan, d *Definitions, st *pb.GetStatsResponse, c clients) error
	// start gives a new caller its own state; nil: none.
	start func(*caller) error
	// call makes one call and checks its answer.
	call func(c *caller, ctx context.Context) result
}

// workloadCalls are the Go driver's rows, by workload name: one per workload
// of workloads.json (a test holds the two together).
var workloadCalls = map[string]calls{
	"counter": {
		setup: func(_ context.Context, p *plan, d *Definitions, _ *pb.GetStatsResponse, _ clients) error {
			p.delta = d.Counter.Defaults.Delta
			p.drawn[0] = true
			var err error
			p.increment, err = encodeFrame(&pb.IncrementRequest{Delta: p.delta})
			return err
		},
		call: (*caller).increment,
	},
	"bank": {
		setup: func(_ context.Context, p *plan, d *Definitions, st *pb.GetStatsResponse, _ clients) error {
			return p.setupBank(p.cfg, d, st)
		},
		call: (*caller).bank,
	},
	"kv": {
		setup: func(ctx context.Context, p *plan, d *Definitions, _ *pb.GetStatsResponse, c clients) error {
			return p.setupKV(ctx, p.cfg, d, c)
		},
		start: func(cl *caller) error {
			if cl.p.sharedKeys != nil {
				cl.seen = make([]uint64, cl.p.sharedKeys.N())
				return nil
			}
			cl.versions = make([]uint64, cl.p.keysPerCaller)
			cl.ownGet = make([]*frame, cl.p.keysPerCaller)
			cl.ownPut = make([]*frame, cl.p.keysPerCaller)
			for slot := range cl.p.keysPerCaller {
				var err error
				if cl.ownGet[slot], cl.ownPut[slot], err = cl.p.kvFrames(cl.ownKey(slot)); err != nil {
					return err
				}
			}
			return nil
		},
		call: (*caller).kvCall,
	},
}

func (p *plan) setupBank(cfg Config, d *Definitions, st *pb.GetStatsResponse) error {
	n := int(st.GetAccounts())
	if n == 0 {
		n = cfg.Accounts // noop keeps no bank
	}
	if n < 2 {
		return fmt.Errorf("load: the bank has %d accounts; transfers need 2", n)
	}
	b := d.Bank.Defaults
	if int(b.OneAccount) > n {
		return fmt.Errorf("load: one_account %d but the bank has %d accounts", b.OneAccount, n)
	}
	m, err := d.ParseMix(cmp.Or(cfg.Mix, d.Bank.Mix))
	if err != nil {
		return err
	}
	if cfg.ReadRatio >= 0 {
		m = d.ReadRatioMix(cfg.ReadRatio)
		p.reportedReadRatio = cfg.ReadRatio
	}
	p.mix = mix{Mix: m}
	for _, e := range m {
		i := slices.Index(p.cases, e.Case)
		p.mix.idx = append(p.mix.idx, i)
		p.drawn[i] = true
	}
	if p.accounts, err = NewZipf(n, cfg.Skew); err != nil {
		return err
	}
	if p.pairs, err = NewZipf(n-1, cfg.Skew); err != nil {
		return err
	}
	p.refusalExpected = d.Bank.Scenarios[cfg.Scenario].RefusalExpected
	p.amount, p.oneAccount, p.historyLimit = b.Amount, b.OneAccount, b.HistoryLimit
	return nil
}

func (p *plan) setupKV(ctx context.Context, cfg Config, d *Definitions, c clients) error {
	k := d.KV.Defaults
	p.readRatio = k.ReadRatio
	if cfg.ReadRatio >= 0 {
		p.readRatio = cfg.ReadRatio
	}
	p.reportedReadRatio = p.readRatio
	p.value = []byte(strings.Repeat("locklab ", cfg.ValueSize/8+1)[:cfg.ValueSize])
	var err error
	if p.valueField, err = proto.Marshal(&pb.PutRequest{Value: p.value}); err != nil {
		return fmt.Errorf("load: encoding the kv value: %w", err)
	}
	p.keysPerCaller = k.KeysPerCaller
	p.kvGet, p.kvPut = slices.Index(p.cases, "get"), slices.Index(p.cases, "put")
	if p.kvGet < 0 || p.kvPut < 0 {
		return fmt.Errorf("load: workloads.json: kv cases %v, want get and put", p.cases)
	}
	for i := range p.drawn {
		p.drawn[i] = true
	}
	if cfg.Skew == 0 {
		return nil
	}
	if p.sharedKeys, err = NewZipf(k.SharedKeys, cfg.Skew); err != nil {
		return err
	}
	p.sharedGet, p.sharedPut = make([]*frame, k.SharedKeys), make([]*frame, k.SharedKeys)
	for rank := range k.SharedKeys {
		if p.sharedGet[rank], p.sharedPut[rank], err = p.kvFrames(sharedKey(rank)); err != nil {
			return err
		}
	}
	return p.putSharedKeys(ctx, c)
}

// kvFrames are key's Get and Put requests. A Put's frame is the key's part
// and the value's, which every Put shares.
func (p *plan) kvFrames(key string) (get, put *frame, err error) {
	g, err := proto.Marshal(&pb.GetRequest{Key: key})
	if err != nil {
		return nil, nil, fmt.Errorf("load: encoding key %q: %w", key, err)
	}
	k, err := proto.Marshal(&pb.PutRequest{Key: key})
	if err != nil {
		return nil, nil, fmt.Errorf("load: encoding key %q: %w", key, err)
	}
	return newFrame(g), newFrame(k, p.valueField), nil
}

// putSharedKeys puts every shared key once, 16 calls at a time.
func (p *plan) putSharedKeys(ctx context.Context, c clients) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ranks := make(chan int)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := range ranks {
				if _, err := c.kv.Put(ctx, &pb.PutRequest{Key: sharedKey(i), Value: p.value}); err != nil {
					select {
					case errs <- fmt.Errorf("load: putting the shared keys: %w", err):
					default:
					}
					cancel()
				}
			}
		})
	}
	for i := range p.sharedKeys.N() {
		select {
		case ranks <- i:
		case <-ctx.Done():
		}
	}
	close(ranks)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return ctx.Err()
	}
}

func sharedKey(rank int) string { return "shared/" + strconv.Itoa(rank) }

// caller is one concurrent caller: a k6 VU. Its state is its own.
type caller struct {
	id  int
	p   *plan
	c   clients
	rng *rand.Rand
	rec *shard
	// kv, owned keys: slot -> version of this caller's last Put (0 unknown)
	versions       []uint64
	puts           int
	ownGet, ownPut []*frame // slot -> the key's requests
	// kv, shared keys: rank -> highest version this caller has seen
	seen []uint64
	// acknowledged over the whole run (warm-up and all)
	ackedDelta, ackedTransfers int64

	// The bank's requests, set and encoded into scr call by call.
	scr         *scratch
	transferReq pb.TransferMoneyRequest
	balanceReq  pb.GetBalanceRequest
	historyReq  pb.GetHistoryRequest
	// The answers, one value per kind, decoded into call by call.
	incrementAns incrementAnswer
	transferAns  transferAnswer
	balanceAns   balanceAnswer
	historyAns   historyAnswer
	putAns       putAnswer
	getAns       getAnswer
}

func newCaller(id int, p *plan, c clients, rec *shard) (*caller, error) {
	cl := &caller{
		id: id, p: p, c: c, rec: rec,
		rng: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(id))),
		scr: new(scratch),
	}
	if p.calls.start != nil {
		if err := p.calls.start(cl); err != nil {
			return nil, err
		}
	}
	return cl, nil
}

// do makes one call of the workload and checks its answer.
func (c *caller) do(ctx context.Context) result {
	ctx, cancel := context.WithTimeout(ctx, c.p.cfg.Timeout)
	defer cancel()
	r := c.p.calls.call(c, ctx)
	c.ackedDelta += r.ackedDelta
	if r.ackedTransfer {
		c.ackedTransfers++
	}
	return r
}

// invoke makes one unary call of method: req, a frame, is sent as it is and
// the answer decoded into ans.
func (c *caller) invoke(ctx context.Context, method string, req *frame, ans answer) error {
	return c.c.conn.Invoke(ctx, method, req, ans)
}

// judge classifies an answer as k6/lib/core.js's call does: OK with a body
// that passes (or is not checked), an expected refusal (FAILED_PRECONDITION
// where the scenario allows it), or unexpected.
func judge(caseIdx int, err error, refusalOK, bodyOK bool) result {
	code := status.Code(err)
	r := result{caseIdx: caseIdx, code: code}
	switch {
	case err == nil && bodyOK:
		r.class = outcomeOK
	case code == codes.FailedPrecondition && refusalOK:
		r.class = outcomeRefusal
	default:
		r.class = outcomeUnexpected
	}
	return r
}

// ---- counter -----------------------------------------------------------------

func (c *caller) increment(ctx context.Context) result {
	err := c.invoke(ctx, pb.CounterService_Increment_FullMethodName, c.p.increment, &c.incrementAns)
	r := judge(0, err, false, err == nil && (!c.p.storeBacked || c.incrementAns.value >= c.p.delta))
	if err == nil {
		r.ackedDelta = c.p.delta
	}
	return r
}

// ---- bank --------------------------------------------------------------------

// account draws an account, 1..N, Zipf-skewed: account 1 is the hottest.
func (c *caller) account() uint32 { return uint32(c.p.accounts.Next(c.rng)) + 1 }

// pair draws two distinct accounts as k6's randomPair does.
func (c *caller) pair() (from, to uint32) {
	from = c.account()
	to = uint32(c.p.pairs.Next(c.rng)) + 1
	if to >= from {
		to++
	}
	return from, to
}

func (c *caller) bank(ctx context.Context) result {
	i := c.p.mix.pick(c.rng.Float64())
	var r result
	switch c.p.cases[i] {
	case "transfer":
		r = c.transfer(ctx, i)
	case "balance-one":
		r = c.balance(ctx, i, c.p.oneAccount)
	case "balance-random":
		r = c.balance(ctx, i, c.account())
	case "history-one":
		r = c.history(ctx, i, c.p.oneAccount)
	default: // history-random
		r = c.history(ctx, i, c.account())
	}
	if r.code != codes.OK && r.code != codes.FailedPrecondition {
		// No answer from the server's handler: the transport may still
		// hold the request's bytes.
		c.scr = new(scratch)
	}
	return r
}

func (c *caller) transfer(ctx context.Context, i int) result {
	from, to := c.pair()
	amount := c.p.amount
	c.transferReq.FromAccount, c.transferReq.ToAccount, c.transferReq.Amount = from, to, amount
	err := c.invoke(ctx, pb.BankService_TransferMoney_FullMethodName, c.scr.encode(&c.transferReq), &c.transferAns)
	a := &c.transferAns
	body := !c.p.storeBacked || (a.seq > 0 && a.fromBal >= 0 && a.toBal >= amount)
	r := judge(i, err, c.p.refusalExpected, err == nil && body)
	r.ackedTransfer = err == nil
	return r
}

func (c *caller) balance(ctx context.Context, i int, account uint32) result {
	c.balanceReq.Account = account
	err := c.invoke(ctx, pb.BankService_GetBalance_FullMethodName, c.scr.encode(&c.balanceReq), &c.balanceAns)
	return judge(i, err, false, err == nil && (!c.p.storeBacked || c.balanceAns.balance >= 0))
}

// history asks for account's newest transfers; the answer holds at most the
// limit, newest first, each touching the account (historyAnswer checks).
func (c *caller) history(ctx context.Context, i int, account uint32) result {
	c.historyReq.Account, c.historyReq.Limit = account, c.p.historyLimit
	c.historyAns.account, c.historyAns.limit = account, c.p.historyLimit
	err := c.invoke(ctx, pb.BankService_GetHistory_FullMethodName, c.scr.encode(&c.historyReq), &c.historyAns)
	return judge(i, err, false, err == nil && (!c.p.storeBacked || c.historyAns.ok))
}

// ---- kv ----------------------------------------------------------------------
//
// Unskewed, as in k6/lib/workloads.js: each caller writes only its own keys,
// vu/<id>/<slot>, round robin, and reads back keys it has written, so a Put
// must return the key's previous version + 1 and a Get the version of the
// caller's last Put. Skewed, every caller draws keys shared/<rank> by Zipf;
// the keys exist (setup put them) and a key's version can only grow, so each
// answer must be at least the version this caller saw last for that key (a
// Put's strictly above it).

func (c *caller) kvCall(ctx context.Context) result {
	if c.p.sharedKeys != nil {
		return c.kvShared(ctx)
	}
	if c.puts == 0 || c.rng.Float64() >= c.p.readRatio {
		return c.put(ctx)
	}
	return c.get(ctx)
}

func (c *caller) ownKey(slot int) string {
	return "vu/" + strconv.Itoa(c.id+1) + "/" + strconv.Itoa(slot)
}

func (c *caller) put(ctx context.Context) result {
	slot := c.puts % c.p.keysPerCaller
	c.puts++
	last := c.versions[slot]
	err := c.invoke(ctx, pb.KVService_Put_FullMethodName, c.ownPut[slot], &c.putAns)
	got := c.putAns.version
	ok := !c.p.storeBacked || (last > 0 && got == last+1) || (last == 0 && got >= 1)
	// After a failed call the Put may or may not have been applied.
	c.versions[slot] = 0
	if err == nil {
		c.versions[slot] = got
	}
	return judge(c.p.kvPut, err, false, err == nil && ok)
}

func (c *caller) get(ctx context.Context) result {
	slot := c.rng.IntN(min(c.puts, c.p.keysPerCaller))
	want := c.versions[slot]
	err := c.invoke(ctx, pb.KVService_Get_FullMethodName, c.ownGet[slot], &c.getAns)
	a := &c.getAns
	ok := !c.p.storeBacked || (a.valueLen == len(c.p.value) && (want == 0 || a.version == want))
	return judge(c.p.kvGet, err, false, err == nil && ok)
}

func (c *caller) kvShared(ctx context.Context) result {
	rank := c.p.sharedKeys.Next(c.rng)
	seen := c.seen[rank]
	var (
		version uint64
		err     error
		ok      bool
		caseIdx int
	)
	if c.rng.Float64() < c.p.readRatio {
		caseIdx = c.p.kvGet
		err = c.invoke(ctx, pb.KVService_Get_FullMethodName, c.p.sharedGet[rank], &c.getAns)
		version = c.getAns.version
		ok = c.getAns.valueLen == len(c.p.value) && version >= max(seen, 1)
	} else {
		caseIdx = c.p.kvPut
		err = c.invoke(ctx, pb.KVService_Put_FullMethodName, c.p.sharedPut[rank], &c.putAns)
		version = c.putAns.version
		ok = version > seen
	}
	if err == nil {
		c.seen[rank] = max(seen, version)
	}
	return judge(caseIdx, err, false, err == nil && (!c.p.storeBacked || ok))
}
