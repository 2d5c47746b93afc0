package tpch

import (
	"fmt"
	"sync"

	"golang.org/x/sys/unix"
)

// textPoolSize is the size of dbgen's text pool: 300 MiB of generated sentences from which
// every comment column takes a random substring.
const textPoolSize = 300 * 1024 * 1024

// maxSentence bounds one generated sentence (dbgen's MAX_SENT_LEN).
const maxSentence = 256

// textPool returns dbgen's text pool. It is built on first use (about 1 s of CPU, spread
// over the cores)
// and never changes afterwards, so every generator in the process shares it. The pool lives
// outside the Go heap, in an anonymous mapping with transparent huge pages requested: it is
// never freed, and keeping it off the heap keeps it from doubling the garbage collector's
// heap target.
var textPool = sync.OnceValue(func() []byte {
	pool := allocPool(textPoolSize)
	// Filling is sequential (one random stream). Faulting the pages in is not: another
	// goroutine populates them ahead of the writer, which takes the kernel's page zeroing
	// off the sequential path (MADV_POPULATE_WRITE fills page tables without changing
	// contents, so it is harmless where the writer has been; kernels before 5.14 refuse it
	// and nothing changes).
	populated := make(chan struct{})
	go func() {
		defer close(populated)
		const step = 16 << 20
		for off := 0; off < len(pool); off += step {
			if unix.Madvise(pool[off:min(off+step, len(pool))], unix.MADV_POPULATE_WRITE) != nil {
				return
			}
		}
	}()
	fillTextPool(pool, loadDists())
	<-populated
	return pool
})

func allocPool(n int) []byte {
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return make([]byte, n)
	}
	// Huge pages cost more to fault in than 4 KiB pages but save more than that in TLB
	// misses on the random reads that follow (measured: about 10% less user time at SF 1).
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE)
	return b
}

// poolCheckpoint is a sentence boundary of the text pool: the byte offset where a sentence
// starts and the seed of the text stream when dbgen starts generating it.
type poolCheckpoint struct {
	offset int
	seed   int64
}

// poolCheckpoints returns sentence boundaries near each eighth of the pool, so that the
// pool, which dbgen generates from one random stream, can be filled in eight independent
// pieces. They are derived from the sequential fill (TestPoolCheckpoints re-derives them),
// and fillTextPool checks that every piece ends exactly where the next begins.
func poolCheckpoints() []poolCheckpoint {
	return []poolCheckpoint{
		{0, 933588178}, // the stream's starting seed (streamDefs)
		{39321619, 374858592},
		{78643223, 123793686},
		{117964817, 1062410537},
		{157286442, 400078567},
		{196608019, 1105413057},
		{235929648, 1407925218},
		{275251227, 42055684},
	}
}

// fillTextPool writes dbgen's sentences into pool, separated by single spaces, the last one
// cut to fit, exactly as dbgen's dbg_text does on its first call: the pieces between
// checkpoints on their own goroutines.
func fillTextPool(pool []byte, d *distributions) {
	cps := poolCheckpoints()
	var wg sync.WaitGroup
	for i, cp := range cps {
		end := len(pool)
		if i+1 < len(cps) {
			end = cps[i+1].offset
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if pos := fillPoolPiece(pool, cp, end, d); pos != end {
				panic(fmt.Sprintf("tpch: text pool piece from %d ended at %d, not at the next sentence boundary %d", cp.offset, pos, end))
			}
		}()
	}
	wg.Wait()
}

// fillPoolPiece generates sentences from checkpoint cp until end and returns where the
// sentences stopped: end itself if cp and end are consecutive checkpoints.
func fillPoolPiece(pool []byte, cp poolCheckpoint, end int, d *distributions) int {
	var r rng
	r.seed[sTextPool] = cp.seed
	var sentence [maxSentence + 16]byte
	pos := cp.offset
	// Sentences are written in place while a whole one fits before end (the next piece
	// belongs to another goroutine); the last few go through sentence.
	for pos+len(sentence)+1 <= end {
		n := txtSentence(pool[pos:pos:pos+len(sentence)], &r, d)
		if cap(n) != len(sentence) {
			panic("tpch: a text pool sentence outgrew maxSentence")
		}
		pos += len(n)
		pool[pos] = ' '
		pos++
	}
	for pos < end {
		n := txtSentence(sentence[:0], &r, d)
		need := len(pool) - pos
		if need >= len(n)+1 {
			copy(pool[pos:], n)
			pos += len(n)
			pool[pos] = ' '
			pos++
		} else {
			copy(pool[pos:], n[:need])
			pos += need
		}
	}
	return pos
}

// pick draws a member of d from stream s (dbgen's pick_str) and returns its index.
//
// It is unif(1, d.total, s) with the float arithmetic replaced by the integer division it
// always equals here (TestPickIsUnif checks every step of it): for a draw x in
// [1, 2³¹−2] and a span below 2¹⁶, x·span/(2³¹−1) is never an integer and lies at least
// 1/(2³¹−1) from one, while dbgen's two roundings move it by less than span·2⁻⁵², so both
// truncate alike. Picks are most of the text pool's draws, and the division was a quarter
// of its fill time.
func (r *rng) pick(d *dist, s int) int {
	x := nextRand(r.seed[s])
	r.seed[s] = x
	r.usage[s]++
	return int(d.pick[x*d.total/pmModulus])
}

// txtSentence appends one sentence of dbgen's grammar to dst: a sentence form from
// "grammar", noun phrases and verb phrases from "np" and "vp", words from the word lists.
func txtSentence(dst []byte, r *rng, d *distributions) []byte {
	form := d.grammar.text[r.pick(d.grammar, sTextPool)]
	for i := 0; i < len(form); i++ {
		switch form[i] {
		case 'N':
			dst = txtNP(dst, r, d)
		case 'V':
			dst = txtVP(dst, r, d)
		case 'P':
			dst = append(dst, d.prepositions.bytes[r.pick(d.prepositions, sTextPool)]...)
			dst = append(dst, " the "...)
			dst = txtNP(dst, r, d)
		case 'T':
			// The terminator replaces the space after the last word.
			dst = append(dst[:len(dst)-1], d.terminators.bytes[r.pick(d.terminators, sTextPool)]...)
		}
	}
	return dst
}

// txtNP appends a noun phrase and a trailing space; a form's "J," adds a comma.
func txtNP(dst []byte, r *rng, d *distributions) []byte {
	form := d.np.text[r.pick(d.np, sTextPool)]
	for i := 0; i < len(form); i++ {
		var src *dist
		switch form[i] {
		case 'A':
			src = d.articles
		case 'J':
			src = d.adjectives
		case 'D':
			src = d.adverbs
		case 'N':
			src = d.nouns
		default:
			continue
		}
		dst = append(dst, src.bytes[r.pick(src, sTextPool)]...)
		if i+1 < len(form) && form[i+1] != ' ' {
			i++
			dst = append(dst, form[i])
		}
		dst = append(dst, ' ')
	}
	return dst
}

// txtVP appends a verb phrase and a trailing space.
func txtVP(dst []byte, r *rng, d *distributions) []byte {
	form := d.vp.text[r.pick(d.vp, sTextPool)]
	for i := 0; i < len(form); i++ {
		var src *dist
		switch form[i] {
		case 'D':
			src = d.adverbs
		case 'V':
			src = d.verbs
		case 'X':
			src = d.auxiliaries
		default:
			continue
		}
		dst = append(dst, src.bytes[r.pick(src, sTextPool)]...)
		dst = append(dst, ' ')
	}
	return dst
}
