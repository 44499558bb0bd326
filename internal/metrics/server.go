package metrics

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"time"
)

// Server serves an Exporter's handler on a listener of its own, for the life of a watch.
type Server struct {
	srv    *http.Server
	ln     net.Listener
	served chan error
}

// Listen binds addr (host:port; port 0 picks a free one) and serves h on it in the background. Binding happens
// here, before the watch's first pass, so a taken or forbidden address is an error at start, not a log line
// later. Errors of the HTTP server itself (a client that misbehaves) go to errLog.
func Listen(addr string, h http.Handler, errLog io.Writer) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{
		srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
			ErrorLog: log.New(errLog, "deadletter: metrics server: ", 0)},
		ln:     ln,
		served: make(chan error, 1),
	}
	go func() { s.served <- s.srv.Serve(ln) }()
	return s, nil
}

// Addr is the address bound (with the port chosen when addr asked for port 0).
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Shutdown stops accepting scrapes, lets those in flight finish until ctx ends, and returns once the server has
// stopped — so a watch that returns leaves no listener behind.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if err != nil {
		s.srv.Close()
	}
	if served := <-s.served; !errors.Is(served, http.ErrServerClosed) {
		return errors.Join(err, served)
	}
	return err
}
