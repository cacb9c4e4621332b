package serve

// A client written independently of this code: it uses none of locklab's
// packages (no generated code, no workload, no server; only the test's setup
// starts the command, in a process of its own) and learns the API the way
// grpcurl or a foreign-language client would, through gRPC server
// reflection. It builds its descriptors with protodesc, its messages with
// dynamicpb, and checks every answer against the contract alone
// (docs/design.md §api).

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

// The API as docs/design.md §api states it: scenario B funds the odd accounts
// of the default bank (1000 accounts) with the default 20,000,000 each.
const (
	apiPackage      = "locklab.v1"
	numAccounts     = 1000
	initialBalance  = 20_000_000
	scenarioBTotal  = numAccounts / 2 * initialBalance
	transferAmount  = 1000
	historyKept     = 100
	defaultHistory  = 20
	maxHistoryLimit = 1000
	maxKeyLen       = 256
)

type kind = protoreflect.Kind

// contract lists every RPC the test uses with the request and response
// fields the contract names, and their kinds. discover checks them all against what
// the server reflects before any load starts.
var contract = map[string]struct{ req, resp map[string]kind }{
	"CounterService/Increment":    {map[string]kind{"delta": protoreflect.Int64Kind}, map[string]kind{"value": protoreflect.Int64Kind}},
	"CounterService/GetValue":     {map[string]kind{}, map[string]kind{"value": protoreflect.Int64Kind}},
	"BankService/TransferMoney":   {map[string]kind{"from_account": protoreflect.Uint32Kind, "to_account": protoreflect.Uint32Kind, "amount": protoreflect.Int64Kind}, map[string]kind{"seq": protoreflect.Uint64Kind, "from_balance": protoreflect.Int64Kind, "to_balance": protoreflect.Int64Kind}},
	"BankService/GetBalance":      {map[string]kind{"account": protoreflect.Uint32Kind}, map[string]kind{"balance": protoreflect.Int64Kind}},
	"BankService/GetHistory":      {map[string]kind{"account": protoreflect.Uint32Kind, "limit": protoreflect.Uint32Kind}, map[string]kind{"transfers": protoreflect.MessageKind}},
	"KVService/Put":               {map[string]kind{"key": protoreflect.StringKind, "value": protoreflect.BytesKind}, map[string]kind{"version": protoreflect.Uint64Kind}},
	"KVService/Get":               {map[string]kind{"key": protoreflect.StringKind}, map[string]kind{"value": protoreflect.BytesKind, "version": protoreflect.Uint64Kind}},
	"AdminService/Reset":          {map[string]kind{"scenario": protoreflect.EnumKind, "accounts": protoreflect.Uint32Kind, "initial_balance": protoreflect.Int64Kind}, map[string]kind{}},
	"AdminService/GetStats":       {map[string]kind{}, map[string]kind{"mode": protoreflect.StringKind, "total_balance": protoreflect.Int64Kind, "counter_value": protoreflect.Int64Kind}},
	"grpc.health.v1.Health/Check": {nil, nil}, // present, fields not ours to check
}

// dynAPI is the API as learnt through reflection.
type dynAPI struct {
	conn    *grpc.ClientConn
	methods map[string]protoreflect.MethodDescriptor // by "Service/Method"
}

// discover asks the server for its services and the files that define them.
func discover(t *testing.T, conn *grpc.ClientConn) *dynAPI {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel() // also ends the stream
	stream, err := rpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	require.NoError(t, err)
	ask := func(req *rpb.ServerReflectionRequest) *rpb.ServerReflectionResponse {
		t.Helper()
		require.NoError(t, stream.Send(req))
		resp, err := stream.Recv()
		require.NoError(t, err)
		require.Nil(t, resp.GetErrorResponse(), "reflection error")
		return resp
	}

	var services []string
	for _, s := range ask(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_ListServices{ListServices: "*"}}).GetListServicesResponse().GetService() {
		services = append(services, s.GetName())
	}
	for _, want := range []string{"CounterService", "BankService", "KVService", "AdminService"} {
		require.Contains(t, services, apiPackage+"."+want)
	}
	require.Contains(t, services, "grpc.health.v1.Health", "the contract: the standard health service")
	require.Contains(t, services, "grpc.reflection.v1.ServerReflection")

	files := map[string]*descriptorpb.FileDescriptorProto{} // by file name
	for _, svc := range services {
		resp := ask(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: svc}})
		for _, raw := range resp.GetFileDescriptorResponse().GetFileDescriptorProto() {
			fd := &descriptorpb.FileDescriptorProto{}
			require.NoError(t, proto.Unmarshal(raw, fd))
			files[fd.GetName()] = fd
		}
	}
	require.NoError(t, stream.CloseSend())
	_, err = stream.Recv()
	require.ErrorIs(t, err, io.EOF)

	set := &descriptorpb.FileDescriptorSet{}
	for _, fd := range files {
		set.File = append(set.File, fd)
	}
	reg, err := protodesc.NewFiles(set)
	require.NoError(t, err, "the reflected files do not form a consistent set")

	api := &dynAPI{conn: conn, methods: map[string]protoreflect.MethodDescriptor{}}
	for _, svc := range services {
		d, err := reg.FindDescriptorByName(protoreflect.FullName(svc))
		require.NoError(t, err, "service %s", svc)
		sd, ok := d.(protoreflect.ServiceDescriptor)
		require.True(t, ok, "%s is not a service", svc)
		for i := range sd.Methods().Len() {
			md := sd.Methods().Get(i)
			short := strings.TrimPrefix(string(sd.FullName()), apiPackage+".")
			api.methods[short+"/"+string(md.Name())] = md
		}
	}
	for name, c := range contract {
		md, ok := api.methods[name]
		require.True(t, ok, "method %s not reflected", name)
		require.False(t, md.IsStreamingClient() || md.IsStreamingServer(), "%s: want a unary RPC", name)
		for f, k := range c.req {
			fd := md.Input().Fields().ByName(protoreflect.Name(f))
			require.NotNil(t, fd, "%s request: no field %s", name, f)
			require.Equal(t, k, fd.Kind(), "%s request field %s", name, f)
		}
		for f, k := range c.resp {
			fd := md.Output().Fields().ByName(protoreflect.Name(f))
			require.NotNil(t, fd, "%s response: no field %s", name, f)
			require.Equal(t, k, fd.Kind(), "%s response field %s", name, f)
		}
	}
	transfer := api.methods["BankService/GetHistory"].Output().Fields().ByName("transfers")
	require.True(t, transfer.IsList(), "transfers is repeated")
	for f, k := range map[string]kind{"seq": protoreflect.Uint64Kind, "from_account": protoreflect.Uint32Kind, "to_account": protoreflect.Uint32Kind, "amount": protoreflect.Int64Kind} {
		fd := transfer.Message().Fields().ByName(protoreflect.Name(f))
		require.NotNil(t, fd, "Transfer: no field %s", f)
		require.Equal(t, k, fd.Kind(), "Transfer field %s", f)
	}
	return api
}

// call invokes method with a request whose fields are set from fields (Go
// values of the fields' kinds) and returns the response and status code.
// discover has checked every name the test uses, so a missing one is a bug
// in this file and panics.
func (a *dynAPI) call(ctx context.Context, method string, fields map[string]any) (*dynamicpb.Message, codes.Code, error) {
	md := a.methods[method]
	req := dynamicpb.NewMessage(md.Input())
	for name, v := range fields {
		fd := md.Input().Fields().ByName(protoreflect.Name(name))
		if fd == nil {
			panic(fmt.Sprintf("%s has no field %s", method, name))
		}
		req.Set(fd, protoreflect.ValueOf(v))
	}
	resp := dynamicpb.NewMessage(md.Output())
	full := "/" + string(md.Parent().FullName()) + "/" + string(md.Name())
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	err := a.conn.Invoke(ctx, full, req, resp)
	return resp, status.Code(err), err
}

// field reads a scalar field of a response by name.
func field(m *dynamicpb.Message, name string) protoreflect.Value {
	fd := m.Descriptor().Fields().ByName(protoreflect.Name(name))
	if fd == nil {
		panic(fmt.Sprintf("%s has no field %s", m.Descriptor().FullName(), name))
	}
	return m.Get(fd)
}

// must calls and requires OK, for the set-up and final checks.
func (a *dynAPI) must(t *testing.T, method string, fields map[string]any) *dynamicpb.Message {
	t.Helper()
	resp, _, err := a.call(context.Background(), method, fields)
	require.NoError(t, err, method)
	return resp
}

// reset rebuilds the state as scenario B with the default sizes (0 means
// default in the contract), naming the scenario by its enum value name.
func (a *dynAPI) reset(t *testing.T) {
	t.Helper()
	sf := a.methods["AdminService/Reset"].Input().Fields().ByName("scenario")
	b := sf.Enum().Values().ByName("SCENARIO_B")
	require.NotNil(t, b, "enum %s has no SCENARIO_B", sf.Enum().FullName())
	a.must(t, "AdminService/Reset", map[string]any{"scenario": b.Number()})
}

// codeSet is the statuses a call may end with.
type codeSet []codes.Code

func (s codeSet) has(c codes.Code) bool {
	for _, x := range s {
		if x == c {
			return true
		}
	}
	return false
}

var (
	okOnly          = codeSet{codes.OK}
	invalidArgument = codeSet{codes.InvalidArgument}
	notFound        = codeSet{codes.NotFound}
)

func inRange(id uint32) bool { return id >= 1 && id <= numAccounts }

// kvEntry is what a worker knows of one of its own keys: no one else writes it.
type kvEntry struct {
	value   []byte
	version uint64
}

// worker is one client's view: its acknowledged increments, its own keys,
// the outcomes it saw, and every answer the contract does not allow.
type worker struct {
	api   *dynAPI
	id    int
	rng   *rand.Rand
	acked int64 // sum of the deltas of OK Increments
	kv    map[string]kvEntry

	outcomes   map[string]map[codes.Code]int // by method
	mismatches []string
	gone       bool     // saw UNAVAILABLE: the server is going or gone
	reached    *reached // the mix's branches any worker has seen; nil: not followed
}

// mixBranches are the answers the random mix means to reach, each at least
// once in a mode's load: TestReflectionClient checks every one.
var mixBranches = [...]struct {
	method string
	code   codes.Code
}{
	{"TransferMoney", codes.OK},
	{"TransferMoney", codes.FailedPrecondition},
	{"TransferMoney", codes.NotFound},
	{"TransferMoney", codes.InvalidArgument},
	{"Get", codes.OK},
	{"GetHistory", codes.InvalidArgument},
}

// reached is which of mixBranches the workers of one load have seen.
type reached [len(mixBranches)]atomic.Bool

func (r *reached) see(method string, code codes.Code) {
	for i, b := range mixBranches {
		if b.method == method && b.code == code {
			r[i].Store(true)
		}
	}
}

// all reports whether every branch was seen.
func (r *reached) all() bool {
	for i := range r {
		if !r[i].Load() {
			return false
		}
	}
	return true
}

func (w *worker) record(method string, args any, want codeSet, got codes.Code, err error) bool {
	if w.outcomes[method] == nil {
		w.outcomes[method] = map[codes.Code]int{}
	}
	w.outcomes[method][got]++
	if w.reached != nil {
		w.reached.see(method, got)
	}
	if got == codes.Unavailable {
		w.gone = true
	}
	if !want.has(got) {
		w.mismatch("%s(%v): got %v, want one of %v (%v)", method, args, got, want, err)
		return false
	}
	return got == codes.OK
}

func (w *worker) mismatch(format string, a ...any) {
	w.mismatches = append(w.mismatches, fmt.Sprintf("worker %d: ", w.id)+fmt.Sprintf(format, a...))
}

// account picks an account, out of range one time in 20.
func (w *worker) account() uint32 {
	switch w.rng.IntN(40) {
	case 0:
		return 0
	case 1:
		return numAccounts + 1
	}
	return 1 + w.rng.Uint32N(numAccounts)
}

// key picks one of the worker's keys, or one the contract refuses.
func (w *worker) key() string {
	switch w.rng.IntN(12) {
	case 0:
		return ""
	case 1:
		return strings.Repeat("k", 300)
	case 2:
		return strings.Repeat("k", maxKeyLen+1)
	case 3: // the longest valid key
		k := fmt.Sprintf("w%02d-", w.id)
		return k + strings.Repeat("x", maxKeyLen-len(k))
	}
	return fmt.Sprintf("w%02d-%d", w.id, w.rng.IntN(8))
}

func validKey(k string) bool { return k != "" && len(k) <= maxKeyLen }

func (w *worker) step(ctx context.Context) {
	switch op := w.rng.IntN(8); op {
	case 0:
		delta := w.rng.Int64N(6)
		want := okOnly
		if w.rng.IntN(8) == 0 {
			delta, want = -1, invalidArgument
		}
		resp, got, err := w.api.call(ctx, "CounterService/Increment", map[string]any{"delta": delta})
		if w.record("Increment", delta, want, got, err) {
			w.acked += delta
			if v := field(resp, "value").Int(); v < w.acked {
				w.mismatch("Increment(%d) = %d, below this worker's own acknowledged sum %d", delta, v, w.acked)
			}
		}
	case 1, 2:
		from, to, amount := w.account(), w.account(), int64(transferAmount)
		switch w.rng.IntN(20) {
		case 0:
			amount = 0
		case 1:
			amount = -transferAmount
		case 2:
			to = from
		}
		var want codeSet
		switch {
		case amount <= 0 || from == to: // malformed whatever the state
			want = invalidArgument
		case !inRange(from) || !inRange(to):
			want = notFound
		default: // the only refusal of a well-formed transfer is an overdraft
			want = codeSet{codes.OK, codes.FailedPrecondition}
		}
		args := fmt.Sprintf("%d→%d %d", from, to, amount)
		resp, got, err := w.api.call(ctx, "BankService/TransferMoney", map[string]any{"from_account": from, "to_account": to, "amount": amount})
		if w.record("TransferMoney", args, want, got, err) {
			fb, tb, seq := field(resp, "from_balance").Int(), field(resp, "to_balance").Int(), field(resp, "seq").Uint()
			if fb < 0 || tb < amount || seq == 0 {
				w.mismatch("TransferMoney(%s) = seq %d, balances %d and %d", args, seq, fb, tb)
			}
		}
	case 3:
		acct := w.account()
		want := okOnly
		if !inRange(acct) {
			want = notFound
		}
		resp, got, err := w.api.call(ctx, "BankService/GetBalance", map[string]any{"account": acct})
		if w.record("GetBalance", acct, want, got, err) {
			if b := field(resp, "balance").Int(); b < 0 || b%transferAmount != 0 {
				w.mismatch("GetBalance(%d) = %d: want >= 0 and a multiple of %d", acct, b, transferAmount)
			}
		}
	case 4:
		acct, limit := w.account(), w.rng.Uint32N(1201)
		var want codeSet
		switch {
		case limit > maxHistoryLimit:
			want = invalidArgument
		case !inRange(acct):
			want = notFound
		default:
			want = okOnly
		}
		resp, got, err := w.api.call(ctx, "BankService/GetHistory", map[string]any{"account": acct, "limit": limit})
		if w.record("GetHistory", fmt.Sprintf("%d limit %d", acct, limit), want, got, err) {
			w.checkHistory(resp, acct, limit)
		}
	case 5, 6:
		k := w.key()
		value := make([]byte, w.rng.IntN(600))
		for i := range value {
			value[i] = byte(w.rng.Uint32())
		}
		want := okOnly
		if !validKey(k) {
			want = invalidArgument
		}
		resp, got, err := w.api.call(ctx, "KVService/Put", map[string]any{"key": k, "value": value})
		if w.record("Put", len(k), want, got, err) {
			e := w.kv[k]
			e.value, e.version = value, e.version+1
			w.kv[k] = e
			if v := field(resp, "version").Uint(); v != e.version {
				w.mismatch("Put(%q) = version %d, want %d", k, v, e.version)
			}
		}
	case 7:
		k := w.key()
		e, known := w.kv[k]
		var want codeSet
		switch {
		case !validKey(k):
			want = invalidArgument
		case !known:
			want = notFound
		default:
			want = okOnly
		}
		resp, got, err := w.api.call(ctx, "KVService/Get", map[string]any{"key": k})
		if w.record("Get", len(k), want, got, err) {
			if v, ver := field(resp, "value").Bytes(), field(resp, "version").Uint(); !bytes.Equal(v, e.value) || ver != e.version {
				w.mismatch("Get(%q) = %d bytes version %d, want %d bytes version %d", k, len(v), ver, len(e.value), e.version)
			}
		}
	}
}

// checkHistory: at most the limit (0 means 20) and at most the 100 kept,
// newest first, each one touching the account.
func (w *worker) checkHistory(resp *dynamicpb.Message, acct, limit uint32) {
	list := field(resp, "transfers").List()
	want := int(limit)
	if want == 0 {
		want = defaultHistory
	}
	if list.Len() > min(want, historyKept) {
		w.mismatch("GetHistory(%d limit %d) returned %d transfers", acct, limit, list.Len())
	}
	var prev uint64
	for i := range list.Len() {
		tr := list.Get(i).Message()
		get := func(n string) protoreflect.Value {
			return tr.Get(tr.Descriptor().Fields().ByName(protoreflect.Name(n)))
		}
		seq, from, to, amount := get("seq").Uint(), uint32(get("from_account").Uint()), uint32(get("to_account").Uint()), get("amount").Int()
		if (from != acct && to != acct) || amount != transferAmount || seq == 0 || (i > 0 && seq >= prev) {
			w.mismatch("GetHistory(%d): transfer %d is seq %d %d→%d %d (previous seq %d)", acct, i, seq, from, to, amount, prev)
		}
		prev = seq
	}
}

// TestReflectionClient drives each store-backed mode with a random mix of
// valid and invalid commands from 64 independent clients, checking every
// status against the contract, then checks that money was conserved and no
// acknowledged increment was lost. The load lasts loadTime, and longer
// (up to mixBound) until the mix has reached every branch it means to test:
// on a busy machine half a second may hold too few calls. The modes run side
// by side, each its own server process.
func TestReflectionClient(t *testing.T) {
	const (
		workers  = 64
		loadTime = 500 * time.Millisecond
		mixBound = time.Minute
	)
	for _, mode := range storeModesServingAll() {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			p := startServer(t, options(mode))
			api := discover(t, dial(t, p.addr))
			api.reset(t)
			assert.Equal(t, int64(initialBalance), field(api.must(t, "BankService/GetBalance", map[string]any{"account": uint32(1)}), "balance").Int())
			assert.Equal(t, int64(0), field(api.must(t, "BankService/GetBalance", map[string]any{"account": uint32(2)}), "balance").Int())

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ws := make([]*worker, workers)
			var (
				wg        sync.WaitGroup
				seen      reached
				start     = time.Now()
				end, last = start.Add(loadTime), start.Add(mixBound)
			)
			for i := range ws {
				seed := uint64(time.Now().UnixNano())
				t.Logf("worker %d seed %d", i, seed)
				ws[i] = &worker{
					api: &dynAPI{conn: dial(t, p.addr), methods: api.methods}, id: i,
					rng: rand.New(rand.NewPCG(seed, uint64(i))),
					kv:  map[string]kvEntry{}, outcomes: map[string]map[codes.Code]int{},
					reached: &seen,
				}
				wg.Add(1)
				go func(w *worker) { // joined by wg.Wait below
					defer wg.Done()
					// A server that went away fails every later call the
					// same way: one mismatch says it.
					for now := time.Now(); (now.Before(end) || !seen.all() && now.Before(last)) && !w.gone; now = time.Now() {
						w.step(ctx)
					}
				}(ws[i])
			}
			waitTimeout(t, &wg, mixBound+2*time.Minute, "the workers")

			var acked int64
			var mismatches []string
			outcomes := map[string]map[codes.Code]int{}
			for _, w := range ws {
				acked += w.acked
				mismatches = append(mismatches, w.mismatches...)
				for m, byCode := range w.outcomes {
					if outcomes[m] == nil {
						outcomes[m] = map[codes.Code]int{}
					}
					for c, n := range byCode {
						outcomes[m][c] += n
					}
				}
			}
			t.Logf("outcomes: %v", outcomes)
			if len(mismatches) > 10 {
				mismatches = append(mismatches[:10], fmt.Sprintf("... and %d more", len(mismatches)-10))
			}
			assert.Empty(t, mismatches, "answers the contract does not allow")
			// The mix reached every branch it means to test.
			for _, b := range mixBranches {
				assert.Positive(t, outcomes[b.method][b.code], "%s answered %v", b.method, b.code)
			}

			var total int64
			for id := uint32(1); id <= numAccounts; id++ {
				b := field(api.must(t, "BankService/GetBalance", map[string]any{"account": id}), "balance").Int()
				assert.GreaterOrEqual(t, b, int64(0), "account %d", id)
				total += b
			}
			_, got, err := api.call(context.Background(), "BankService/GetBalance", map[string]any{"account": uint32(numAccounts + 1)})
			assert.Equal(t, codes.NotFound, got, "%v: the bank has %d accounts", err, numAccounts)
			assert.Equal(t, int64(scenarioBTotal), total, "money conserved")
			assert.Equal(t, acked, field(api.must(t, "CounterService/GetValue", nil), "value").Int(), "counter == sum of acknowledged deltas")

			stats := api.must(t, "AdminService/GetStats", nil)
			assert.Equal(t, mode, field(stats, "mode").String())
			assert.Equal(t, total, field(stats, "total_balance").Int())
			assert.Equal(t, acked, field(stats, "counter_value").Int())

			cancel()
			p.stop(t, syscall.SIGTERM)
		})
	}
}
