package ipc

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func hdr(mut func(b []byte)) []byte {
	b := AppendHeader(nil, Header{Kind: KindBatch, Stream: 3, Length: 10})
	if mut != nil {
		mut(b)
	}
	return b
}

func TestDecodeHeader(t *testing.T) {
	cases := []struct {
		name    string
		in      []byte
		max     uint32
		wantErr error
		msg     string
	}{
		{"ok", hdr(nil), 100, nil, ""},
		{"short", hdr(nil)[:15], 100, ErrIncomplete, "header needs 16"},
		{"bad magic", hdr(func(b []byte) { b[0] = 'X' }), 100, ErrProtocol, "bad magic"},
		{"version", hdr(func(b []byte) { b[2] = 2 }), 100, ErrVersion, "version 2"},
		{"unknown kind", hdr(func(b []byte) { b[3] = 42 }), 100, ErrProtocol, "unknown frame kind 42"},
		{"kind zero", hdr(func(b []byte) { b[3] = 0 }), 100, ErrProtocol, "unknown frame kind 0"},
		{"reserved", hdr(func(b []byte) { b[7] = 1 }), 100, ErrProtocol, "reserved"},
		{"fin on batch", hdr(func(b []byte) { b[4] = 1 }), 100, ErrProtocol, "flags"},
		{"undefined flag", AppendHeader(nil, Header{Kind: KindRequest, Flags: 4, Stream: 1}), 100, ErrProtocol, "flags"},
		{"fin on request", AppendHeader(nil, Header{Kind: KindRequest, Flags: FlagFin, Stream: 1}), 100, nil, ""},
		{"too large", hdr(nil), 9, ErrProtocol, "exceeds the maximum frame size 9"},
		{"batch on stream 0", AppendHeader(nil, Header{Kind: KindBatch}), 100, ErrProtocol, "on stream 0"},
		{"ping on stream 1", AppendHeader(nil, Header{Kind: KindPing, Stream: 1}), 100, ErrProtocol, "must be on stream 0"},
		{"error on stream 0", AppendHeader(nil, Header{Kind: KindError}), 100, nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, err := DecodeHeader(tc.in, tc.max)
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				if !bytes.Equal(AppendHeader(nil, h), tc.in) {
					t.Fatalf("re-encoding %+v differs", h)
				}
				return
			}
			if !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("error %v, want %v containing %q", err, tc.wantErr, tc.msg)
			}
		})
	}
}

func TestDecodeFrameSequence(t *testing.T) {
	var b []byte
	b = AppendFrame(b, KindPing, 0, 0, mpAppendUint(nil, 7))
	b = AppendFrame(b, KindRequest, FlagFin, 1, appendRequest(nil, "echo", mpAppendBin(nil, []byte("x")), 0))
	b = AppendFrame(b, KindCredit, 0, 1, mpAppendUint(nil, 1<<20))
	var kinds []Kind
	for len(b) > 0 {
		// Every proper prefix is incomplete, never an error of another kind.
		h, p, n, err := DecodeFrame(b, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		for cut := 0; cut < n; cut++ {
			if _, _, _, err := DecodeFrame(b[:cut], 1<<20); !errors.Is(err, ErrIncomplete) {
				t.Fatalf("prefix of %d bytes: %v", cut, err)
			}
		}
		if h.Kind == KindRequest {
			q, err := decodeRequest(p)
			if err != nil || q.Method != "echo" {
				t.Fatalf("request %+v %v", q, err)
			}
		}
		kinds = append(kinds, h.Kind)
		b = b[n:]
	}
	if len(kinds) != 3 || kinds[2] != KindCredit {
		t.Fatalf("kinds %v", kinds)
	}
}

func TestControlPayloads(t *testing.T) {
	e, err := decodeErrorPayload(appendErrorPayload(nil, CodeAuth, "nope"))
	if err != nil || e.Code != CodeAuth || e.Message != "nope" {
		t.Fatalf("%+v %v", e, err)
	}
	if r, err := decodeCancelPayload(appendCancelPayload(nil, "KILL QUERY")); err != nil || r != "KILL QUERY" {
		t.Fatalf("%q %v", r, err)
	}
	for _, bad := range [][]byte{nil, {0xc1}, {0x81, 0xa1}, {0x91, 0x01}, {0x01, 0x02}} {
		if _, err := decodeUintPayload(KindCredit, bad); !errors.Is(err, ErrProtocol) {
			t.Errorf("credit payload %x: %v", bad, err)
		}
		if _, err := decodeRequest(bad); !errors.Is(err, ErrProtocol) {
			t.Errorf("request payload %x: %v", bad, err)
		}
	}
	q, err := decodeRequest(appendRequest(nil, "m", nil, 1500))
	if err != nil || q.Timeout.Microseconds() != 1 || string(q.Args) != "\xc0" {
		t.Fatalf("%+v %v", q, err)
	}
}

func TestMsgpackSkipBoundsLoops(t *testing.T) {
	// A map announcing 2^32-1 entries in 5 bytes must fail fast, not loop.
	r := mpReader{b: []byte{0xdf, 0xff, 0xff, 0xff, 0xff}}
	if err := r.skip(); err == nil {
		t.Fatal("skip accepted a truncated huge map")
	}
	deep := bytes.Repeat([]byte{0x91}, 100000)
	deep = append(deep, 0x01)
	r = mpReader{b: deep}
	if err := r.skip(); err != nil || !r.done() {
		t.Fatalf("deeply nested array: %v", err)
	}
}

func TestHelloRoundTrip(t *testing.T) {
	h := Hello{Version: 1, Role: "server", Name: "pm", Instance: bytes.Repeat([]byte{1}, 16), Nonce: bytes.Repeat([]byte{2}, 32),
		Auth: AuthToken, MaxFrame: 1 << 20, Window: 1 << 20, MaxStreams: 8, Unix: []string{"unix:///a", "unix://@b"}}
	got, err := DecodeHello(AppendHello(nil, &h))
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != h.Name || got.Auth != h.Auth || len(got.Unix) != 2 || got.MaxStreams != 8 || !bytes.Equal(got.Nonce, h.Nonce) {
		t.Fatalf("%+v", got)
	}
	for name, bad := range map[string]Hello{
		"role":      {Role: "boss"},
		"auth":      {Auth: "magic"},
		"max_frame": {MaxFrame: 10},
		"nonce":     {Nonce: []byte{1}},
		"compress":  {Compression: "gzip"},
	} {
		if _, err := DecodeHello(AppendHello(nil, &bad)); !errors.Is(err, ErrProtocol) {
			t.Errorf("%s: %v", name, err)
		}
	}
	dup := mpAppendStr(mpAppendStr(mpAppendStr(mpAppendStr(mpAppendMapHeader(nil, 2), "name"), "a"), "name"), "b")
	if _, err := DecodeHello(dup); err == nil || !strings.Contains(err.Error(), "repeats") {
		t.Errorf("duplicate key: %v", err)
	}
}

func TestParseArrowMessage(t *testing.T) {
	msgs := arrowStreamMessages(t)
	if len(msgs) != 2 {
		t.Fatalf("%d messages", len(msgs))
	}
	for i, m := range msgs {
		info, _, body, err := parseArrowMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		want := []uint8{arrowMsgSchema, arrowMsgRecordBatch}[i]
		if info.headerType != want || int64(len(body)) != info.bodyLength {
			t.Fatalf("message %d: %+v", i, info)
		}
		// Every truncation and every single-byte corruption of the metadata is rejected or
		// parsed without a panic.
		for cut := 0; cut < len(m); cut++ {
			if _, _, _, err := parseArrowMessage(m[:cut]); err == nil && cut < len(m) {
				t.Fatalf("message %d cut to %d bytes accepted", i, cut)
			}
		}
		for j := 8; j < len(m)-len(body); j++ {
			c := bytes.Clone(m)
			c[j] ^= 0xff
			_, _, _, _ = parseArrowMessage(c)
		}
	}
}
