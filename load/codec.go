package load

import (
	"errors"
	"fmt"

	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	pb "github.com/locklab/locklab/proto/locklab/v1"
)

// The driver's calls cost it as much CPU as they cost the server, and a
// driver that runs out of CPU measures itself. So the callers' requests
// are encoded before the run (or, the bank's, into bytes each caller
// reuses) and their answers are read where they arrive, into values each
// caller reuses: a call allocates nothing of the driver's own, only what
// grpc-go needs.

// frame is one request's protobuf encoding as grpc-go sends it. grpc-go
// only reads it, so one frame serves every call and every caller.
type frame struct{ data mem.BufferSlice }

// newFrame is the frame of parts, sent one after the other. Protobuf
// merges concatenated encodings of a message: two parts encoded from the
// same message type hold its fields together.
func newFrame(parts ...[]byte) *frame {
	f := &frame{}
	for _, p := range parts {
		f.data = append(f.data, mem.SliceBuffer(p))
	}
	return f
}

// encodeFrame is m's frame.
func encodeFrame(m proto.Message) (*frame, error) {
	b, err := proto.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("load: encoding %T: %w", m, err)
	}
	return newFrame(b), nil
}

// scratchSize bounds the requests a scratch encodes in place: a transfer,
// the largest of the bank's, takes 23 bytes at most.
const scratchSize = 64

// scratch encodes one caller's requests whose fields change call by call
// (the bank's accounts) into the same bytes. A call's bytes are free again
// once its answer has come: the server answers a unary call only after
// reading its request. A call that ended without the server's answer may
// leave them with the transport, and the caller takes a new scratch then
// (caller.renew).
type scratch struct {
	buf [scratchSize]byte
	// views[n] is buf[:n] as a frame, made the first time a request
	// takes n bytes: a frame made per call would cost two allocations.
	views [scratchSize + 1]*frame
}

// encode encodes m into s. m holds numbers only, so encoding cannot fail.
func (s *scratch) encode(m proto.Message) *frame {
	b, err := proto.MarshalOptions{}.MarshalAppend(s.buf[:0], m)
	if err != nil {
		panic(fmt.Sprintf("load: encoding %T: %v", m, err))
	}
	if len(b) > scratchSize { // outgrew buf: bytes of its own
		return newFrame(b)
	}
	v := s.views[len(b)]
	if v == nil {
		v = newFrame(s.buf[:len(b)])
		s.views[len(b)] = v
	}
	return v
}

// answer is a caller's reused value for one kind of answer, filled from
// the answer's protobuf encoding. decode resets it first.
type answer interface {
	decode(b []byte) error
}

// codec is the driver's gRPC codec: it sends frames as they are and
// decodes answers into answer values; any other message (setup's, through
// the generated stubs) goes through grpc-go's proto codec. It names itself
// "proto": the server sees the content-subtype it always sees.
type codec struct{ proto encoding.CodecV2 }

func newCodec() codec { return codec{proto: encoding.GetCodecV2(grpcproto.Name)} }

func (c codec) Marshal(v any) (mem.BufferSlice, error) {
	if f, ok := v.(*frame); ok {
		return f.data, nil
	}
	return c.proto.Marshal(v)
}

func (c codec) Unmarshal(data mem.BufferSlice, v any) error {
	a, ok := v.(answer)
	if !ok {
		return c.proto.Unmarshal(data, v)
	}
	if len(data) == 1 { // an answer that arrived in one piece, as most do
		return a.decode(data[0].ReadOnlyData())
	}
	b := data.MaterializeToBuffer(mem.DefaultBufferPool())
	defer b.Free()
	return a.decode(b.ReadOnlyData())
}

func (codec) Name() string { return grpcproto.Name }

// ---- answers -----------------------------------------------------------------
//
// The answers' field numbers are read from the generated descriptors, so
// that locklab.proto stays their one source.

// fieldNumber is the number of m's field name; a missing field is a driver
// out of step with locklab.proto, found when the package loads.
func fieldNumber(m proto.Message, name protoreflect.Name) protowire.Number {
	fd := m.ProtoReflect().Descriptor().Fields().ByName(name)
	if fd == nil {
		panic(fmt.Sprintf("load: %T has no field %q", m, name))
	}
	return fd.Number()
}

var (
	fIncrementValue   = fieldNumber(&pb.IncrementResponse{}, "value")
	fTransferSeq      = fieldNumber(&pb.TransferMoneyResponse{}, "seq")
	fTransferFromBal  = fieldNumber(&pb.TransferMoneyResponse{}, "from_balance")
	fTransferToBal    = fieldNumber(&pb.TransferMoneyResponse{}, "to_balance")
	fBalance          = fieldNumber(&pb.GetBalanceResponse{}, "balance")
	fHistoryTransfers = fieldNumber(&pb.GetHistoryResponse{}, "transfers")
	fHistSeq          = fieldNumber(&pb.Transfer{}, "seq")
	fHistFrom         = fieldNumber(&pb.Transfer{}, "from_account")
	fHistTo           = fieldNumber(&pb.Transfer{}, "to_account")
	fPutVersion       = fieldNumber(&pb.PutResponse{}, "version")
	fGetValue         = fieldNumber(&pb.GetResponse{}, "value")
	fGetVersion       = fieldNumber(&pb.GetResponse{}, "version")
)

// errMalformed: an answer that is not the protobuf it should be; grpc-go
// fails the call (INTERNAL), which the driver counts as unexpected.
var errMalformed = errors.New("load: malformed answer")

// field is one field of an encoding: a varint's value, or a
// length-delimited field's bytes; other wire types are skipped.
type field struct {
	num   protowire.Number
	typ   protowire.Type
	v     uint64
	bytes []byte
}

// nextField reads the field at the start of b and returns the rest.
func nextField(b []byte) (field, []byte, error) {
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 {
		return field{}, nil, errMalformed
	}
	b = b[n:]
	f := field{num: num, typ: typ}
	switch typ {
	case protowire.VarintType:
		f.v, n = protowire.ConsumeVarint(b)
	case protowire.BytesType:
		f.bytes, n = protowire.ConsumeBytes(b)
	default:
		n = protowire.ConsumeFieldValue(num, typ, b)
	}
	if n < 0 {
		return field{}, nil, errMalformed
	}
	return f, b[n:], nil
}

// varint is f's value if f is the varint field num.
func (f field) varint(num protowire.Number) (uint64, bool) {
	return f.v, f.num == num && f.typ == protowire.VarintType
}

// bytesOf is f's bytes if f is the length-delimited field num.
func (f field) bytesOf(num protowire.Number) ([]byte, bool) {
	return f.bytes, f.num == num && f.typ == protowire.BytesType
}

// incrementAnswer is CounterService/Increment's.
type incrementAnswer struct{ value int64 }

func (a *incrementAnswer) decode(b []byte) error {
	*a = incrementAnswer{}
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return err
		}
		if v, ok := f.varint(fIncrementValue); ok {
			a.value = int64(v)
		}
		b = rest
	}
	return nil
}

// transferAnswer is BankService/TransferMoney's.
type transferAnswer struct {
	seq            uint64
	fromBal, toBal int64
}

func (a *transferAnswer) decode(b []byte) error {
	*a = transferAnswer{}
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return err
		}
		if v, ok := f.varint(fTransferSeq); ok {
			a.seq = v
		} else if v, ok := f.varint(fTransferFromBal); ok {
			a.fromBal = int64(v)
		} else if v, ok := f.varint(fTransferToBal); ok {
			a.toBal = int64(v)
		}
		b = rest
	}
	return nil
}

// balanceAnswer is BankService/GetBalance's.
type balanceAnswer struct{ balance int64 }

func (a *balanceAnswer) decode(b []byte) error {
	*a = balanceAnswer{}
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return err
		}
		if v, ok := f.varint(fBalance); ok {
			a.balance = int64(v)
		}
		b = rest
	}
	return nil
}

// historyAnswer is BankService/GetHistory's, checked as it is read (the
// transfers are not kept): ok reports what historyOK would of the
// transfers, for the account and limit the caller set before the call.
type historyAnswer struct {
	account, limit uint32
	n              int
	ok             bool
}

func (a *historyAnswer) decode(b []byte) error {
	a.n, a.ok = 0, true
	var prevSeq uint64
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return err
		}
		b = rest
		t, ok := f.bytesOf(fHistoryTransfers)
		if !ok {
			continue
		}
		var seq uint64
		var from, to uint32
		for len(t) > 0 {
			g, trest, err := nextField(t)
			if err != nil {
				return err
			}
			if v, ok := g.varint(fHistSeq); ok {
				seq = v
			} else if v, ok := g.varint(fHistFrom); ok {
				from = uint32(v)
			} else if v, ok := g.varint(fHistTo); ok {
				to = uint32(v)
			}
			t = trest
		}
		if (from != a.account && to != a.account) || (a.n > 0 && seq >= prevSeq) {
			a.ok = false
		}
		prevSeq = seq
		a.n++
	}
	if a.n > int(a.limit) {
		a.ok = false
	}
	return nil
}

// putAnswer is KVService/Put's.
type putAnswer struct{ version uint64 }

func (a *putAnswer) decode(b []byte) error {
	*a = putAnswer{}
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return err
		}
		if v, ok := f.varint(fPutVersion); ok {
			a.version = v
		}
		b = rest
	}
	return nil
}

// getAnswer is KVService/Get's: the value's length, not its bytes.
type getAnswer struct {
	valueLen int
	version  uint64
}

func (a *getAnswer) decode(b []byte) error {
	*a = getAnswer{}
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return err
		}
		if v, ok := f.varint(fGetVersion); ok {
			a.version = v
		} else if v, ok := f.bytesOf(fGetValue); ok {
			a.valueLen = len(v)
		}
		b = rest
	}
	return nil
}
