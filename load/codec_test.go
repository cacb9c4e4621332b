package load

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	pb "github.com/locklab/locklab/proto/locklab/v1"
)

// withUnknown is b with a field no answer has, before and after: a newer
// server's answer, which must read as the same answer.
func withUnknown(b []byte) []byte {
	unknown := protowire.AppendTag(nil, 99, protowire.BytesType)
	unknown = protowire.AppendBytes(unknown, []byte("later"))
	unknown = protowire.AppendTag(unknown, 98, protowire.Fixed64Type)
	unknown = protowire.AppendFixed64(unknown, 7)
	return append(append(unknown, b...), unknown...)
}

func marshal(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := proto.Marshal(m)
	require.NoError(t, err)
	return b
}

// decodeBoth decodes b into a as the codec does, whole and cut into pieces
// (an answer that arrived in several frames), and checks they agree.
func decodeBoth[A any, PA interface {
	*A
	answer
}](t *testing.T, b []byte) A {
	t.Helper()
	var whole, pieces A
	require.NoError(t, PA(&whole).decode(b))
	var cut mem.BufferSlice
	for rest := b; len(rest) > 0; {
		n := min(len(rest), 3)
		cut = append(cut, mem.SliceBuffer(rest[:n]))
		rest = rest[n:]
	}
	require.NoError(t, newCodec().Unmarshal(cut, PA(&pieces)))
	assert.Equal(t, whole, pieces)
	return whole
}

// TestAnswersDecodeAsProto is a differential test: the driver's decoders
// read what the generated code reads, for random answers, with fields
// unknown to them around.
func TestAnswersDecodeAsProto(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		inc := &pb.IncrementResponse{Value: r.Int64() - r.Int64()}
		for _, b := range [][]byte{marshal(t, inc), withUnknown(marshal(t, inc))} {
			assert.Equal(t, inc.GetValue(), decodeBoth[incrementAnswer](t, b).value)
		}

		tr := &pb.TransferMoneyResponse{Seq: r.Uint64(), FromBalance: r.Int64() - r.Int64(), ToBalance: r.Int64N(1 << 40)}
		for _, b := range [][]byte{marshal(t, tr), withUnknown(marshal(t, tr))} {
			assert.Equal(t, transferAnswer{seq: tr.GetSeq(), fromBal: tr.GetFromBalance(), toBal: tr.GetToBalance()},
				decodeBoth[transferAnswer](t, b))
		}

		bal := &pb.GetBalanceResponse{Balance: r.Int64() - r.Int64()}
		assert.Equal(t, bal.GetBalance(), decodeBoth[balanceAnswer](t, withUnknown(marshal(t, bal))).balance)

		put := &pb.PutResponse{Version: r.Uint64()}
		assert.Equal(t, put.GetVersion(), decodeBoth[putAnswer](t, withUnknown(marshal(t, put))).version)

		get := &pb.GetResponse{Value: make([]byte, r.IntN(2000)), Version: r.Uint64()}
		assert.Equal(t, getAnswer{valueLen: len(get.GetValue()), version: get.GetVersion()},
			decodeBoth[getAnswer](t, withUnknown(marshal(t, get))))
	}
	// Empty answers (the noop server's) are zero values.
	assert.Zero(t, decodeBoth[transferAnswer](t, nil))
	assert.Zero(t, decodeBoth[getAnswer](t, nil))
}

// historyOK is what a history must be, over the generated messages: at
// most limit transfers, newest first, each touching the account.
func historyOK(ts []*pb.Transfer, account, limit uint32) bool {
	if len(ts) > int(limit) {
		return false
	}
	for i, t := range ts {
		if t.GetFromAccount() != account && t.GetToAccount() != account {
			return false
		}
		if i > 0 && t.GetSeq() >= ts[i-1].GetSeq() {
			return false
		}
	}
	return true
}

// TestHistoryAnswerChecksAsProto: the history check made while decoding
// agrees with historyOK over the decoded messages, for random histories of
// which some pass and some fail each way.
func TestHistoryAnswerChecksAsProto(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const account, limit = 5, 4
	verdicts := map[bool]int{}
	for range 2000 {
		h := &pb.GetHistoryResponse{}
		seq := uint64(100)
		for range r.IntN(limit + 2) {
			seq -= uint64(r.IntN(3)) // sometimes not newer-first
			tr := &pb.Transfer{Seq: seq, FromAccount: uint32(r.IntN(7)), ToAccount: uint32(r.IntN(7)), Amount: 10}
			if r.IntN(4) > 0 {
				tr.ToAccount = account
			}
			h.Transfers = append(h.Transfers, tr)
		}
		want := historyOK(h.GetTransfers(), account, limit)
		verdicts[want]++
		a := historyAnswer{account: account, limit: limit}
		require.NoError(t, a.decode(withUnknown(marshal(t, h))))
		assert.Equal(t, want, a.ok, "%v", h)
		assert.Equal(t, len(h.GetTransfers()), a.n)
	}
	assert.Positive(t, verdicts[true], "the control: some histories pass")
	assert.Positive(t, verdicts[false], "the control: some histories fail")
}

// A malformed answer is an error (grpc-go fails the call, counted
// unexpected), not a zero value that might pass.
func TestMalformedAnswers(t *testing.T) {
	good := marshal(t, &pb.TransferMoneyResponse{Seq: 300, FromBalance: 1, ToBalance: 2})
	var a transferAnswer
	require.NoError(t, a.decode(good), "the control: the whole answer decodes")
	for _, b := range [][]byte{good[:1], good[:len(good)-1], {0xff}, {0x80}} {
		assert.ErrorIs(t, a.decode(b), errMalformed, "%x", b)
	}
	hist := marshal(t, &pb.GetHistoryResponse{Transfers: []*pb.Transfer{{Seq: 300, FromAccount: 1}}})
	h := historyAnswer{account: 1, limit: 20}
	require.NoError(t, h.decode(hist))
	hist[1]-- // the transfer's length, one short: its last field is cut
	assert.ErrorIs(t, h.decode(hist[:len(hist)-1]), errMalformed)
}

// TestRequestsEncodeAsProto: the frames the driver sends are what the
// generated code would send, whether encoded before the run or into a
// caller's scratch.
func TestRequestsEncodeAsProto(t *testing.T) {
	bytesOf := func(f *frame) []byte { return f.data.Materialize() }
	var s scratch
	r := rand.New(rand.NewPCG(5, 6))
	for range 200 {
		tr := &pb.TransferMoneyRequest{FromAccount: r.Uint32(), ToAccount: r.Uint32(), Amount: r.Int64() - r.Int64()}
		assert.Equal(t, marshal(t, tr), bytesOf(s.encode(tr)))
		h := &pb.GetHistoryRequest{Account: r.Uint32(), Limit: r.Uint32N(1000)}
		assert.Equal(t, marshal(t, h), bytesOf(s.encode(h)))
	}
	assert.Len(t, bytesOf(s.encode(&pb.TransferMoneyRequest{FromAccount: ^uint32(0), ToAccount: ^uint32(0), Amount: -1})), 23,
		"the largest transfer fits scratchSize")
	// A request longer than the scratch gets bytes of its own.
	long := &pb.PutRequest{Key: string(make([]byte, 2*scratchSize))}
	assert.Equal(t, marshal(t, long), bytesOf(s.encode(long)))

	p := &plan{value: []byte("some value")}
	p.valueField = marshal(t, &pb.PutRequest{Value: p.value})
	get, put, err := p.kvFrames("vu/1/2")
	require.NoError(t, err)
	var gr pb.GetRequest
	require.NoError(t, proto.Unmarshal(bytesOf(get), &gr))
	assert.Equal(t, "vu/1/2", gr.GetKey())
	var pr pb.PutRequest
	require.NoError(t, proto.Unmarshal(bytesOf(put), &pr))
	assert.Equal(t, "vu/1/2", pr.GetKey())
	assert.Equal(t, p.value, pr.GetValue())
}
