package ipc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	arrowipc "github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// arrowStreamMessages returns the encapsulated messages (schema, batch) of a small Arrow
// stream, as the link carries them in SCHEMA and BATCH payloads.
func arrowStreamMessages(tb testing.TB) [][]byte { return writeStreamMessages(tb, 5) }

// writeStreamMessages writes a batch of rows as an Arrow stream with opts and returns
// copies of its encapsulated messages.
func writeStreamMessages(tb testing.TB, rows int, opts ...arrowipc.Option) [][]byte {
	tb.Helper()
	var buf bytes.Buffer
	rec := makeBatch(memory.DefaultAllocator, 0, rows)
	defer rec.Release()
	w := arrowipc.NewWriter(&buf, append([]arrowipc.Option{arrowipc.WithSchema(rec.Schema())}, opts...)...)
	if err := w.Write(rec); err != nil {
		tb.Fatal(err)
	}
	w.Close()
	var out [][]byte
	b := buf.Bytes()
	for len(b) >= 8 && binary.LittleEndian.Uint32(b) == 0xFFFFFFFF {
		metaLen := int(binary.LittleEndian.Uint32(b[4:]))
		if metaLen == 0 {
			break
		}
		info, err := parseArrowMeta(b[8 : 8+metaLen])
		if err != nil {
			tb.Fatal(err)
		}
		n := 8 + metaLen + int(info.bodyLength)
		out = append(out, bytes.Clone(b[:n]))
		b = b[n:]
	}
	return out
}

// FuzzDecodeFrame checks that the frame decoder never panics, reports a prefix of a valid
// frame as incomplete, and that what it accepts re-encodes to the same bytes.
func FuzzDecodeFrame(f *testing.F) {
	f.Add(AppendFrame(nil, KindPing, 0, 0, mpAppendUint(nil, 1)))
	f.Add(AppendFrame(nil, KindRequest, FlagFin, 1, appendRequest(nil, "echo", nil, 0)))
	f.Add(AppendFrame(nil, KindError, 0, 0, appendErrorPayload(nil, CodeProtocol, "x")))
	f.Add([]byte("GET / HTTP/1.1\r\n\r\n"))
	for _, m := range arrowStreamMessages(f) {
		kind := KindBatch
		if info, err := parseArrowMeta(m[8:]); err == nil && info.headerType == arrowMsgSchema {
			kind = KindSchema
		}
		f.Add(AppendFrame(nil, kind, 0, 1, m))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		h, p, n, err := DecodeFrame(b, 1<<16)
		if err != nil {
			if !errors.Is(err, ErrProtocol) && !errors.Is(err, ErrVersion) && !errors.Is(err, ErrIncomplete) {
				t.Fatalf("unclassified error %v", err)
			}
			return
		}
		if n != HeaderSize+len(p) || !bytes.Equal(AppendFrame(nil, h.Kind, h.Flags, h.Stream, p), b[:n]) {
			t.Fatalf("frame %+v does not re-encode to its input", h)
		}
		// The control decoders must not panic on any payload either.
		switch h.Kind {
		case KindHello:
			_, _ = DecodeHello(p)
		case KindRequest:
			_, _ = decodeRequest(p)
		case KindError:
			_, _ = decodeErrorPayload(p)
		case KindCancel:
			_, _ = decodeCancelPayload(p)
		case KindCredit, KindPing, KindPong:
			_, _ = decodeUintPayload(h.Kind, p)
		case KindEnd:
			_ = mpValidMap(p)
		case KindSchema, KindBatch:
			_, _, _, _ = parseArrowMessage(p)
		}
	})
}

// FuzzDecodeHello checks the handshake decoder: no panic, and an accepted hello re-encodes
// to a hello that decodes to the same fields.
func FuzzDecodeHello(f *testing.F) {
	f.Add(AppendHello(nil, &Hello{Version: 1, Role: "client", Name: "exemgr", Nonce: bytes.Repeat([]byte{7}, 32), MaxFrame: 1 << 20, Window: 1 << 20}))
	f.Add(AppendHello(nil, &Hello{Version: 1, Role: "server", Instance: make([]byte, 16), Nonce: make([]byte, 32), Auth: AuthToken, MaxFrame: 1 << 20, Window: 1 << 20, MaxStreams: 4, Unix: []string{"unix:///tmp/x.sock"}}))
	f.Add(AppendHello(nil, &Hello{Proof: make([]byte, 32)}))
	f.Add([]byte{0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := DecodeHello(b)
		if err != nil {
			if !errors.Is(err, ErrProtocol) {
				t.Fatalf("unclassified error %v", err)
			}
			return
		}
		h2, err := DecodeHello(AppendHello(nil, &h))
		if err != nil {
			t.Fatalf("re-encoded hello does not decode: %v", err)
		}
		if h2.Name != h.Name || h2.Role != h.Role || h2.Version != h.Version || !bytes.Equal(h2.Nonce, h.Nonce) || len(h2.Unix) != len(h.Unix) {
			t.Fatalf("round trip changed the hello: %+v vs %+v", h, h2)
		}
	})
}

// FuzzDecodeRequest checks the REQUEST decoder: no panic, errors are protocol errors, and
// the fixed-layout fast path agrees with the general map walk on everything it accepts.
func FuzzDecodeRequest(f *testing.F) {
	f.Add(appendRequest(nil, "echo", nil, 0))
	f.Add(appendRequest(nil, "synth", mpAppendMapHeader(nil, 0), 0))
	f.Add(appendRequest(nil, "ipc.stats", mpAppendBin(nil, make([]byte, 64)), 1500*time.Millisecond))
	f.Add([]byte("\x82\xa6method\xa4echo\xa4args\xc1"))
	f.Add([]byte("\x82\xa4args\xc0\xa6method\xa4echo"))
	f.Fuzz(func(t *testing.T, b []byte) {
		slow, err := decodeRequestSlow(b)
		if err != nil && !errors.Is(err, ErrProtocol) {
			t.Fatalf("unclassified error %v", err)
		}
		fast, ok := decodeRequestFast(b)
		if !ok {
			return
		}
		if err != nil {
			t.Fatalf("fast path accepted %x, the general path refused it: %v", b, err)
		}
		if !bytes.Equal(fast.method, slow.method) || !bytes.Equal(fast.args, slow.args) || fast.Timeout != slow.Timeout {
			t.Fatalf("paths differ on %x: %q %x vs %q %x", b, fast.method, fast.args, slow.method, slow.args)
		}
	})
}
