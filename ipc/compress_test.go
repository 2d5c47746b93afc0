package ipc

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// compressedMessages returns the schema and batch messages of a stream written with Arrow
// body compression (lz4 or zstd).
func compressedMessages(t *testing.T, codec string, rows int) [][]byte {
	t.Helper()
	out := writeStreamMessages(t, rows, compressionOpts(codec)...)
	if len(out) != 2 {
		t.Fatalf("%d messages", len(out))
	}
	return out
}

// corruptBody overwrites the middle of a batch message's body, where the compressed
// buffers are.
func corruptBody(m []byte) []byte {
	metaLen := int(binary.LittleEndian.Uint32(m[4:]))
	out := bytes.Clone(m)
	body := out[8+metaLen:]
	for i := 8; i < len(body)-8; i += 7 {
		body[i] ^= 0x5a
	}
	return out
}

// hugeLengthPrefix sets the uncompressed length that prefixes the first non-empty compressed
// buffer of a batch message to about 1 TiB.
func hugeLengthPrefix(t *testing.T, m []byte) []byte {
	t.Helper()
	metaLen := int(binary.LittleEndian.Uint32(m[4:]))
	out := bytes.Clone(m)
	body := out[8+metaLen:]
	// The first buffer is the validity bitmap of column 0; find the first 8-byte prefix that
	// holds a plausible length (non-zero, not -1) and replace it.
	for off := 0; off+8 <= len(body); off += 8 {
		v := int64(binary.LittleEndian.Uint64(body[off:]))
		if v > 0 && v < 1<<24 {
			binary.LittleEndian.PutUint64(body[off:], 1<<40)
			return out
		}
	}
	t.Fatal("no length prefix found")
	return nil
}

func sameBatches(t *testing.T, a, b arrow.RecordBatch) {
	t.Helper()
	if !array.RecordEqual(a, b) {
		t.Fatalf("batches differ:\n%v\n%v", a, b)
	}
}

// With compression asked for, batches travel compressed both ways and arrive intact, in
// fewer bytes than uncompressed.
func TestCompressionRoundTrip(t *testing.T) {
	const rows, n = 4000, 4
	var plainBytes uint64
	for _, codec := range []string{"", "lz4", "zstd"} {
		t.Run("codec="+codec, func(t *testing.T) {
			srv, _ := newPipeServer(t, Limits{})
			c := pipePair(t, srv, ClientConfig{Compression: codec})
			ctx := context.Background()

			// Server → client.
			st, err := c.Open(ctx, "gen", mpMap("n", n, "rows", rows), true)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; ; i++ {
				rec, err := st.Recv()
				if err == io.EOF {
					if i != n {
						t.Fatalf("%d batches, want %d", i, n)
					}
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				want := makeBatch(memory.DefaultAllocator, i*rows, rows)
				sameBatches(t, want, rec)
				want.Release()
				rec.Release()
			}
			got := st.Stats().BytesIn
			st.Close()
			if codec == "" {
				plainBytes = got
			} else if got*10 > plainBytes*8 {
				t.Fatalf("%s: %d bytes received, uncompressed %d", codec, got, plainBytes)
			}

			// Client → server → client: the echo handler sends back what it received.
			up, err := c.Open(ctx, "echo", nil, false)
			if err != nil {
				t.Fatal(err)
			}
			rec := makeBatch(memory.DefaultAllocator, 7, rows)
			defer rec.Release()
			if err := up.Send(rec); err != nil {
				t.Fatal(err)
			}
			if err := up.CloseSend(nil); err != nil {
				t.Fatal(err)
			}
			back, err := up.Recv()
			if err != nil {
				t.Fatal(err)
			}
			sameBatches(t, rec, back)
			back.Release()
			if codec != "" && up.Stats().BytesOut*10 > plainBytes/n*8 {
				t.Fatalf("%s: upload of %d bytes is not compressed (a plain batch is about %d)", codec, up.Stats().BytesOut, plainBytes/n)
			}
			up.Close()
		})
	}
}

// A compressed batch whose body does not decompress is a protocol error with a message that
// says so, on the client (Recv) and on the server (the connection closes, logged).
func TestCorruptCompressedBatch(t *testing.T) {
	for _, codec := range []string{"lz4", "zstd", "lz4/huge", "zstd/huge"} {
		t.Run(codec, func(t *testing.T) {
			codec, _, _ := strings.Cut(codec, "/")
			msgs := compressedMessages(t, codec, 500)
			bad := corruptBody(msgs[1])
			if strings.HasSuffix(t.Name(), "huge") {
				bad = hugeLengthPrefix(t, msgs[1])
			}

			// Server → client: a handler sends the corrupt batch.
			srv, _ := newPipeServer(t, Limits{})
			srv.Handle("corrupt", func(ctx context.Context, st *Stream) error {
				if err := st.sendData(KindSchema, [][]byte{msgs[0]}, len(msgs[0])); err != nil {
					return err
				}
				return st.sendData(KindBatch, [][]byte{bad}, len(bad))
			})
			c := pipePair(t, srv, ClientConfig{Compression: codec})
			st, err := c.Open(context.Background(), "corrupt", nil, true)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			_, err = st.Recv()
			if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), "malformed Arrow message") {
				t.Fatalf("Recv of a corrupt %s batch: %v", codec, err)
			}
			t.Logf("client error: %v", err)

			// Client → server: the server's echo handler cannot decode the upload.
			env := startServer(t, ServerConfig{})
			nc := rawClient(t, env, true)
			defer nc.Close()
			b := AppendFrame(nil, KindRequest, 0, 1, appendRequest(nil, "echo", nil, 0))
			b = AppendFrame(b, KindSchema, 0, 1, msgs[0])
			b = AppendFrame(b, KindBatch, 0, 1, bad)
			if _, err := nc.Write(b); err != nil {
				t.Fatal(err)
			}
			msg := expectClosed(t, nc)
			if !strings.Contains(msg, "malformed Arrow message") {
				t.Fatalf("server's ERROR for a corrupt %s upload: %q", codec, msg)
			}
			t.Logf("server error: %s", msg)
		})
	}
}
