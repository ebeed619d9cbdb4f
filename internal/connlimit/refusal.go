package connlimit

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc/codes"
)

// refusalTime bounds how long a refused connection is kept to be told why.
const refusalTime = time.Second

// HTTP1 answers a refused connection as an HTTP/1.1 server would: it reads the request's head,
// then answers 503 with Retry-After and the reason as text. Answering before the request is
// read would reach a client that has not sent it yet as an unsolicited response, which HTTP
// clients discard.
func HTTP1(c net.Conn, reason string) {
	body := reason + "\n"
	tell(c, func(rw io.ReadWriter) error {
		if err := readRequestHead(rw); err != nil {
			return err
		}
		_, err := fmt.Fprintf(rw, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"+
			"Retry-After: 1\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		return err
	})
}

// maxRequestHead bounds what a refused client's request head may take to be read.
const maxRequestHead = 16 << 10

// readRequestHead reads an HTTP/1.x request's head, up to its blank line.
func readRequestHead(r io.Reader) error {
	br := bufio.NewReader(io.LimitReader(r, maxRequestHead))
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return err
		}
		if len(bytes.TrimRight(line, "\r\n")) == 0 {
			return nil
		}
	}
}

// HTTP2 answers a refused connection as a gRPC server would: it completes the HTTP/2
// handshake and answers the first call with RESOURCE_EXHAUSTED and the reason (a bare GOAWAY
// would reach the caller only as "the connection is draining"), then sends GOAWAY.
func HTTP2(c net.Conn, reason string) {
	tell(c, func(rw io.ReadWriter) error {
		preface := make([]byte, len(http2.ClientPreface))
		if _, err := io.ReadFull(rw, preface); err != nil || string(preface) != http2.ClientPreface {
			return errors.New("not an HTTP/2 client")
		}
		f := http2.NewFramer(rw, rw)
		if err := f.WriteSettings(); err != nil {
			return err
		}
		for {
			fr, err := f.ReadFrame()
			if err != nil {
				return err
			}
			switch fr := fr.(type) {
			case *http2.SettingsFrame:
				if !fr.IsAck() {
					if err := f.WriteSettingsAck(); err != nil {
						return err
					}
				}
			case *http2.HeadersFrame:
				var block bytes.Buffer
				enc := hpack.NewEncoder(&block)
				for _, hf := range []hpack.HeaderField{
					{Name: ":status", Value: "200"}, {Name: "content-type", Value: "application/grpc"},
					{Name: "grpc-status", Value: strconv.Itoa(int(codes.ResourceExhausted))}, {Name: "grpc-message", Value: reason},
				} {
					_ = enc.WriteField(hf)
				}
				id := fr.StreamID
				if err := f.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block.Bytes(), EndStream: true, EndHeaders: true}); err != nil {
					return err
				}
				return f.WriteGoAway(id, http2.ErrCodeNo, []byte(reason))
			}
		}
	})
}

// OverTLS is refuse on a listener that serves TLS: it completes the TLS handshake, offering
// protocol by ALPN, and refuses over it; a client that does not finish the handshake within the
// refusal's time is closed without a word.
func OverTLS(cfg *tls.Config, protocol string, refuse Refusal) Refusal {
	cfg = cfg.Clone()
	cfg.NextProtos = []string{protocol}
	return func(c net.Conn, reason string) {
		_ = c.SetDeadline(time.Now().Add(refusalTime))
		tc := tls.Server(c, cfg)
		if err := tc.Handshake(); err != nil {
			c.Close()
			return
		}
		refuse(tc, reason)
	}
}

// tell runs the refusal's exchange within refusalTime, shuts the write side, and reads what the
// client still sends until it closes or the time is up: closing a socket with unread data
// resets it, which could discard the refusal before the client reads it.
func tell(c net.Conn, write func(io.ReadWriter) error) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(refusalTime))
	if err := write(c); err != nil {
		return
	}
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(c, 64<<10))
}
