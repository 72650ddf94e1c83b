package imposter

import (
	"context"
	"net"

	"github.com/mockd/mockd/internal/netconn"
)

// connServer is a netconn.Server as a protocolServer; the tcp and smtp servers embed it.
type connServer struct{ netconn.Server }

func (s *connServer) serve(ln net.Listener) error        { return s.Serve(ln) }
func (s *connServer) closeIdle()                         { s.CloseIdle() }
func (s *connServer) shutdown(ctx context.Context) error { return s.Shutdown(ctx) }
