package lockenv

import (
	"context"
	"slices"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Gate is a go-redis hook for tests of batching: it records the length of
// every pipeline a client sends and, once armed, holds the next command or
// pipeline (keeping its connection busy) until Open. The commands go-redis
// pipelines on a new connection (HELLO, CLIENT SETINFO) pass untouched.
type Gate struct {
	mu        sync.Mutex
	pipelines []int
	armed     bool
	held      chan struct{}
	open      chan struct{}
}

// NewGate returns a Gate, armed when armed is true. Add it with
// client.AddHook.
func NewGate(armed bool) *Gate {
	return &Gate{armed: armed, held: make(chan struct{}, 1), open: make(chan struct{})}
}

// Arm makes the gate hold the next command.
func (g *Gate) Arm() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.armed = true
}

// Held receives when a command is held.
func (g *Gate) Held() <-chan struct{} { return g.held }

// Open lets the held command go (once).
func (g *Gate) Open() { close(g.open) }

// Pipelines are the lengths of the pipelines sent so far.
func (g *Gate) Pipelines() []int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.pipelines)
}

func (g *Gate) wait() {
	g.mu.Lock()
	hold := g.armed
	g.armed = false
	g.mu.Unlock()
	if hold {
		g.held <- struct{}{}
		<-g.open
	}
}

// DialHook implements redis.Hook.
func (g *Gate) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook implements redis.Hook.
func (g *Gate) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		g.wait()
		return next(ctx, cmd)
	}
}

// ProcessPipelineHook implements redis.Hook.
func (g *Gate) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if isHandshake(cmds[0]) {
			return next(ctx, cmds)
		}
		g.mu.Lock()
		g.pipelines = append(g.pipelines, len(cmds))
		g.mu.Unlock()
		g.wait()
		return next(ctx, cmds)
	}
}

// isHandshake tells the commands go-redis pipelines on a new connection.
func isHandshake(cmd redis.Cmder) bool {
	return slices.Contains([]string{"hello", "client", "auth", "select"}, cmd.Name())
}
