package ipc

import (
	"context"
	"fmt"
	"time"
)

var (
	errContextCanceled  = context.Canceled
	errDeadlineExceeded = context.DeadlineExceeded
)

// request is a decoded REQUEST payload.
type request struct {
	Method  string
	Args    []byte        // one raw msgpack value (nil encodes as msgpack nil)
	Timeout time.Duration // 0: none
}

// appendRequest encodes a REQUEST payload: {"method": str, "args": any, "timeout_us": uint}.
func appendRequest(dst []byte, method string, args []byte, timeout time.Duration) []byte {
	n := 2
	if timeout > 0 {
		n++
	}
	dst = mpAppendMapHeader(dst, n)
	dst = mpAppendStr(dst, "method")
	dst = mpAppendStr(dst, method)
	dst = mpAppendStr(dst, "args")
	if len(args) == 0 {
		dst = append(dst, 0xc0)
	} else {
		dst = append(dst, args...)
	}
	if timeout > 0 {
		dst = mpAppendStr(dst, "timeout_us")
		us := timeout.Microseconds()
		if us < 1 {
			us = 1
		}
		dst = mpAppendUint(dst, uint64(us))
	}
	return dst
}

// rawRequest is a decoded REQUEST payload whose method and args alias the payload.
type rawRequest struct {
	method  []byte
	args    []byte
	Timeout time.Duration
}

// decodeRequest parses a REQUEST payload; unknown keys are skipped. Args alias payload.
func decodeRequest(payload []byte) (request, error) {
	q, err := decodeRequestRaw(payload)
	return request{Method: string(q.method), Args: q.args, Timeout: q.Timeout}, err
}

// decodeRequestRaw parses a REQUEST payload without allocating. The layout appendRequest
// writes for a call without a deadline ({"method": fixstr, "args": value}) is recognised
// directly; any other valid map takes the general path.
func decodeRequestRaw(payload []byte) (rawRequest, error) {
	if q, ok := decodeRequestFast(payload); ok {
		return q, nil
	}
	return decodeRequestSlow(payload)
}

// decodeRequestFast handles 0x82 "method" <fixstr> "args" <value> exactly; ok is false for
// anything else, including malformed input, which the general path then reports.
func decodeRequestFast(p []byte) (q rawRequest, ok bool) {
	const head = "\x82\xa6method"
	if len(p) < len(head)+1+5 || string(p[:len(head)]) != head {
		return q, false
	}
	c := p[len(head)]
	if c&0xe0 != 0xa0 {
		return q, false
	}
	n := int(c & 0x1f)
	at := len(head) + 1
	if n == 0 || len(p) < at+n+5 || string(p[at+n:at+n+5]) != "\xa4args" {
		return q, false
	}
	r := mpReader{b: p, off: at + n + 5}
	args, err := r.readRaw()
	if err != nil || !r.done() {
		return q, false
	}
	return rawRequest{method: p[at : at+n : at+n], args: args}, true
}

func decodeRequestSlow(payload []byte) (rawRequest, error) {
	var q rawRequest
	r := mpReader{b: payload}
	n, err := r.readMapHeader()
	if err != nil {
		return q, fmt.Errorf("%w: request: %w", ErrProtocol, err)
	}
	for i := 0; i < n; i++ {
		key, err := r.readStrBytes()
		if err != nil {
			return q, fmt.Errorf("%w: request key: %w", ErrProtocol, err)
		}
		switch string(key) {
		case "method":
			q.method, err = r.readStrBytes()
		case "args":
			q.args, err = r.readRaw()
		case "timeout_us":
			var us uint64
			us, err = r.readUint()
			if us > uint64(365*24*time.Hour/time.Microsecond) {
				err = fmt.Errorf("timeout_us %d is more than a year", us)
			}
			q.Timeout = time.Duration(us) * time.Microsecond
		default:
			err = r.skip()
		}
		if err != nil {
			return q, fmt.Errorf("%w: request field %q: %w", ErrProtocol, key, err)
		}
	}
	if !r.done() {
		return q, fmt.Errorf("%w: request: %d trailing bytes", ErrProtocol, len(payload)-r.off)
	}
	if len(q.method) == 0 {
		return q, fmt.Errorf("%w: request without a method", ErrProtocol)
	}
	return q, nil
}

// appendErrorPayload encodes an ERROR payload: {"code": str, "message": str}.
func appendErrorPayload(dst []byte, code, msg string) []byte {
	dst = mpAppendMapHeader(dst, 2)
	dst = mpAppendStr(dst, "code")
	dst = mpAppendStr(dst, code)
	dst = mpAppendStr(dst, "message")
	return mpAppendStr(dst, msg)
}

func decodeErrorPayload(payload []byte) (*RemoteError, error) {
	var e RemoteError
	r := mpReader{b: payload}
	n, err := r.readMapHeader()
	if err != nil {
		return nil, fmt.Errorf("%w: error payload: %w", ErrProtocol, err)
	}
	for i := 0; i < n; i++ {
		key, err := r.readStrBytes()
		if err != nil {
			return nil, fmt.Errorf("%w: error payload key: %w", ErrProtocol, err)
		}
		switch string(key) {
		case "code":
			e.Code, err = r.readString()
		case "message":
			e.Message, err = r.readString()
		default:
			err = r.skip()
		}
		if err != nil {
			return nil, fmt.Errorf("%w: error payload field %q: %w", ErrProtocol, key, err)
		}
	}
	if !r.done() {
		return nil, fmt.Errorf("%w: error payload: trailing bytes", ErrProtocol)
	}
	if e.Code == "" {
		e.Code = CodeInternal
	}
	return &e, nil
}

// appendCancelPayload encodes a CANCEL payload: {"reason": str}.
func appendCancelPayload(dst []byte, reason string) []byte {
	dst = mpAppendMapHeader(dst, 1)
	dst = mpAppendStr(dst, "reason")
	return mpAppendStr(dst, reason)
}

func decodeCancelPayload(payload []byte) (string, error) {
	r := mpReader{b: payload}
	n, err := r.readMapHeader()
	if err != nil {
		return "", fmt.Errorf("%w: cancel payload: %w", ErrProtocol, err)
	}
	reason := ""
	for i := 0; i < n; i++ {
		key, err := r.readStrBytes()
		if err != nil {
			return "", fmt.Errorf("%w: cancel payload key: %w", ErrProtocol, err)
		}
		if string(key) == "reason" {
			reason, err = r.readString()
		} else {
			err = r.skip()
		}
		if err != nil {
			return "", fmt.Errorf("%w: cancel payload field %q: %w", ErrProtocol, key, err)
		}
	}
	if !r.done() {
		return "", fmt.Errorf("%w: cancel payload: trailing bytes", ErrProtocol)
	}
	return reason, nil
}

// decodeUintPayload parses a CREDIT, PING or PONG payload: exactly one msgpack uint.
func decodeUintPayload(k Kind, payload []byte) (uint64, error) {
	r := mpReader{b: payload}
	u, err := r.readUint()
	if err == nil && !r.done() {
		err = r.fail("trailing bytes")
	}
	if err != nil {
		return 0, fmt.Errorf("%w: %v payload: %w", ErrProtocol, k, err)
	}
	return u, nil
}

// emptyMap is the msgpack encoding of {}.
const emptyMap = "\x80"
