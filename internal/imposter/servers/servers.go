// Package servers names the protocols mockd serves: the one place that knows every protocol
// server, so that the imposter core knows none.
package servers

import (
	"github.com/mockd/mockd/internal/imposter"
	"github.com/mockd/mockd/internal/imposter/httpserver"
	"github.com/mockd/mockd/internal/imposter/smtpserver"
	"github.com/mockd/mockd/internal/imposter/tcpserver"
)

// Protocols returns the protocols mockd serves, by name, for imposter.Options.Protocols.
func Protocols() map[string]imposter.Protocol {
	return map[string]imposter.Protocol{
		"http":  httpserver.HTTP,
		"https": httpserver.HTTPS,
		"tcp":   tcpserver.TCP,
		"smtp":  smtpserver.SMTP,
	}
}
