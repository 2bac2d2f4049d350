package agentspaces_test

import (
	"context"
	"net"
	"testing"

	"github.com/courier-agent/courier/internal/agentspaces"
	"github.com/courier-agent/courier/internal/runner"
	"github.com/courier-agent/courier/internal/serve"
)

// The runtime over HTTP ('courier serve', POST /v1/runs) meets every
// conformance case of programs' messages, as 'courier ops' does: the same
// validation, policy presets, journal and approval flow.
func TestConformanceOverHTTP(t *testing.T) {
	agentspaces.ConformanceOverHTTP(t, func(t *testing.T, cfg runner.Config) (string, string) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		token := serve.NewToken()
		done := make(chan error, 1)
		go func() { done <- serve.New(ctx, serve.Options{Config: cfg, Token: token}).Run(ln) }()
		t.Cleanup(func() {
			cancel()
			<-done
		})
		return "http://" + ln.Addr().String(), token
	})
}
