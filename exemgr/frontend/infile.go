package frontend

import (
	"errors"
	"io"
	"sync"
)

// LOAD DATA LOCAL INFILE: while the engine runs the statement, it may ask the client for a
// file (Session.LocalFile). The front end sends the LOCAL INFILE request (0xFB and the file
// name), and the client answers with the file's contents in packets ending with an empty
// one — or with just the empty packet if it cannot or will not send the file. The statement's
// OK or ERR follows, numbered after the client's last packet.

// ErrNotAllowedCommand is MySQL's 1148: the client did not enable LOCAL INFILE.
const ErrNotAllowedCommand uint16 = 1148

// errLocalFileDone is returned by a local file read after Close.
var errLocalFileDone = errors.New("frontend: local file already closed")

// localFile streams the file a client sends for LOAD DATA LOCAL.
type localFile struct {
	c      *conn
	buf    []byte
	eof    bool  // the client's empty packet arrived
	err    error // the connection failed: the session ends
	closed bool
	once   sync.Once
}

// openLocalFile asks the client for name. It is called on the statement's goroutine while
// the engine runs the statement.
func (c *conn) openLocalFile(name string) (io.ReadCloser, error) {
	if c.capability&capLocalFiles == 0 {
		return nil, Errorf(ErrNotAllowedCommand, "The used command is not allowed with this MySQL version: the client did not enable LOAD DATA LOCAL (mariadb --local-infile, go-sql-driver allowAllFiles=true)")
	}
	if c.localFile != nil && !c.localFile.closed {
		return nil, Errorf(ErrUnknownError, "a statement may read one LOCAL file at a time")
	}
	if c.unwatch != nil {
		c.unwatch() // the client is about to talk: stop treating its data as hanging up
	}
	c.w.begin()
	c.w.buf = append(c.w.buf, nullValue) // 0xFB: LOCAL INFILE request
	c.w.buf = append(c.w.buf, name...)
	if err := c.w.end(); err != nil {
		return nil, err
	}
	if err := c.w.flush(); err != nil {
		return nil, err
	}
	c.wire.seq = c.w.seq
	c.localFile = &localFile{c: c}
	return c.localFile, nil
}

func (l *localFile) Read(p []byte) (int, error) {
	if l.closed {
		return 0, errLocalFileDone
	}
	for len(l.buf) == 0 {
		if l.err != nil {
			return 0, l.err
		}
		if l.eof {
			return 0, io.EOF
		}
		l.next()
	}
	n := copy(p, l.buf)
	l.buf = l.buf[n:]
	return n, nil
}

// next reads the client's next packet of the file.
func (l *localFile) next() {
	data, err := l.c.readPacket(true)
	switch {
	case err != nil:
		l.err = err
	case len(data) == 0:
		l.eof = true
	default:
		l.buf = data
	}
}

// Close reads what remains of the file (the client sends it all whatever the server does
// with it), so that the statement's answer comes next in the protocol.
func (l *localFile) Close() error {
	l.once.Do(func() {
		for !l.eof && l.err == nil {
			l.next()
		}
		l.buf, l.closed = nil, true
		l.c.w.reset(l.c.wire.seq)
	})
	return l.err
}

// LocalFile asks the client for the file name (LOAD DATA LOCAL INFILE) and returns a reader
// of its contents. The engine must Close it before the statement returns (the front end
// closes it otherwise); Close reads whatever the engine did not. It fails if no statement of
// this session is running on a connection, or if the client did not enable LOCAL INFILE.
func (s *Session) LocalFile(name string) (io.ReadCloser, error) {
	s.mu.Lock()
	open := s.openLocal
	s.mu.Unlock()
	if open == nil {
		return nil, Errorf(ErrNotAllowedCommand, "The used command is not allowed with this MySQL version: no client connection to read a LOCAL file from")
	}
	return open(name)
}

// setLocalOpener installs (or, with nil, removes) the function LocalFile calls.
func (s *Session) setLocalOpener(open func(string) (io.ReadCloser, error)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.openLocal = open
}
