// Package redisbatch sends the Redis commands of concurrent callers
// together: commands that reach a Pipeline while every lane (DefaultLanes
// unless told) carries a call or a batch in flight go in the next batch,
// one pipeline (one write and one read on one connection) for all of them,
// each caller still getting its own replies. A command that finds a lane
// free goes at once, alone (a caller can make that call itself, after
// TryAlone): an idle instance adds no delay, and a command waits for at
// most one batch round trip before its own batch is sent (see package
// batch).
//
// go-redis's own pipelines take one context for all their commands; here
// a batch runs until the latest of its callers' deadlines (at most
// BatchLimit), and a caller whose context ends returns at once with its
// context's error: its command's outcome is then unknown, as for any call
// abandoned in flight.
package redisbatch

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seatlock/seatlock/internal/lock/batch"
)

// DefaultLanes is how many calls or batches may be in flight at once, each
// on a connection of its own. Fewer callers than that each go alone, at
// once; more wait for a lane and share its next round trip, which saves
// each of them the system calls of its own (on a machine whose cores are
// busy these cost more than the wait). With 8, a few callers pay nothing
// for batching and a crowd still shares round trips: docs/performance.md
// ("The lock client against other Go locks") has the measurements.
const DefaultLanes = 8

// MaxBatch caps the calls of one batch.
const MaxBatch = 128

// BatchLimit bounds a batch whose callers set no deadline.
const BatchLimit = 5 * time.Second

// Client is what a Pipeline needs of go-redis: *redis.Client and
// *redis.ClusterClient both are one (a cluster pipeline splits a batch by
// node).
type Client interface {
	redis.Scripter
	Pipeline() redis.Pipeliner
	Do(ctx context.Context, args ...any) *redis.Cmd
}

// Command is one Redis command: a script call when Script is set (Keys and
// Args are its KEYS and ARGV), else Args alone, as redis.Client.Do takes
// them.
type Command struct {
	Script *redis.Script
	Keys   []string
	Args   []any
}

// Laid is a call of script laid out whole by its caller, as redis.Client.Do
// takes it: "evalsha", the script's hash, the number of keys, the keys,
// the arguments. A caller that boxes its arguments once (or passes strings
// as *string, which go-redis writes as strings) spares the batch boxing
// them again.
type Laid struct {
	Script *redis.Script
	Args   []any
}

// Pipeline batches the commands of concurrent callers.
type Pipeline struct {
	client Client
	queue  *batch.Queue[*call]
}

type call struct {
	ctx     context.Context
	cmds    []Command
	laid    Laid // instead of cmds, when its Script is set
	replies []*redis.Cmd
	reply   [1]*redis.Cmd // replies of a laid call
	done    chan struct{}
}

// New returns a Pipeline on client with lanes batches in flight at most;
// lanes <= 0 sends every call alone (as batch.NewQueue).
func New(client Client, lanes int) *Pipeline {
	p := &Pipeline{client: client}
	p.queue = batch.NewQueue(lanes, MaxBatch, p.send)
	return p
}

// Do sends cmds in one batch and returns their replies, in order. Each
// reply carries its own error (a script's error reply stays that
// command's); a batch that could not reach Redis gives every reply that
// failure. When ctx ends first, every reply is ctx's error.
func (p *Pipeline) Do(ctx context.Context, cmds ...Command) []*redis.Cmd {
	return p.await(&call{ctx: ctx, cmds: cmds, done: make(chan struct{})}, len(cmds))
}

// Lay runs one laid-out script call in the next batch.
func (p *Pipeline) Lay(ctx context.Context, l Laid) *redis.Cmd {
	return p.await(&call{ctx: ctx, laid: l, done: make(chan struct{})}, 1)[0]
}

// await queues c, of n commands, and returns its replies.
func (p *Pipeline) await(c *call, n int) []*redis.Cmd {
	p.queue.Add(c)
	select {
	case <-c.done:
		return c.replies
	case <-c.ctx.Done():
		p.queue.Withdraw(c)
		replies := make([]*redis.Cmd, n)
		for i := range replies {
			replies[i] = redis.NewCmd(c.ctx)
			replies[i].SetErr(c.ctx.Err())
		}
		return replies
	}
}

// Script runs one script call in the next batch.
func (p *Pipeline) Script(ctx context.Context, script *redis.Script, keys []string, args ...any) *redis.Cmd {
	return p.Do(ctx, Command{Script: script, Keys: keys, Args: args})[0]
}

// send runs one batch and answers each of its calls. A lone call runs on
// its caller's context, so that its cancellation interrupts it as a plain
// go-redis call would.
func (p *Pipeline) send(calls []*call) {
	if c := calls[0]; len(calls) == 1 && c.laid.Script != nil {
		c.reply[0] = RunLaid(c.ctx, p.client, c.laid)
		c.replies = c.reply[:]
		close(c.done)
		return
	}
	if c := calls[0]; len(calls) == 1 && len(c.cmds) == 1 && c.cmds[0].Script != nil {
		cmd := c.cmds[0]
		c.replies = []*redis.Cmd{cmd.Script.Run(c.ctx, p.client, cmd.Keys, cmd.Args...)}
		close(c.done)
		return
	}
	ctx := calls[0].ctx
	if len(calls) > 1 {
		var cancel context.CancelFunc
		ctx, cancel = batch.Context(calls, func(c *call) context.Context { return c.ctx }, BatchLimit)
		defer cancel()
	}
	pipe := p.client.Pipeline()
	for _, c := range calls {
		if c.laid.Script != nil {
			c.reply[0] = pipe.Do(ctx, c.laid.Args...)
			c.replies = c.reply[:]
			continue
		}
		c.replies = make([]*redis.Cmd, len(c.cmds))
		for i, cmd := range c.cmds {
			if cmd.Script != nil {
				c.replies[i] = cmd.Script.EvalSha(ctx, pipe, cmd.Keys, cmd.Args...)
			} else {
				c.replies[i] = pipe.Do(ctx, cmd.Args...)
			}
		}
	}
	_, _ = pipe.Exec(ctx) // each reply carries its own error
	for _, c := range calls {
		if c.laid.Script != nil && isNoScript(c.reply[0].Err()) {
			c.reply[0] = RunLaid(ctx, p.client, c.laid)
		}
		for i, cmd := range c.cmds {
			if cmd.Script != nil && isNoScript(c.replies[i].Err()) {
				// Redis forgot the script (restart, SCRIPT FLUSH), so it
				// did not run: Run loads it and runs it.
				c.replies[i] = cmd.Script.Run(ctx, p.client, cmd.Keys, cmd.Args...)
			}
		}
		close(c.done)
	}
}

// Doer sends a command laid out whole: *redis.Client and
// *redis.ClusterClient are one.
type Doer interface {
	redis.Scripter
	Do(ctx context.Context, args ...any) *redis.Cmd
}

// RunLaid runs l alone on client: its EVALSHA, and when Redis has forgotten
// the script (a restart, SCRIPT FLUSH) the script loaded and the EVALSHA
// again, as redis.Script.Run does.
func RunLaid(ctx context.Context, client Doer, l Laid) *redis.Cmd {
	cmd := client.Do(ctx, l.Args...)
	if !isNoScript(cmd.Err()) {
		return cmd
	}
	if err := l.Script.Load(ctx, client).Err(); err != nil {
		cmd.SetErr(err)
		return cmd
	}
	return client.Do(ctx, l.Args...)
}

// isNoScript reports a NOSCRIPT reply; nil is checked first, so that the
// answered call (nearly every one) costs nothing here.
func isNoScript(err error) bool {
	return err != nil && redis.HasErrorPrefix(err, "NOSCRIPT")
}

// Pending is how many calls wait for a batch.
func (p *Pipeline) Pending() int { return p.queue.Pending() }

// TryAlone takes a free lane for a call that its caller makes itself, at
// once, on its own connection: it reports false when every lane is busy or
// calls wait for a batch (then the call goes through Do or Script, to keep
// its turn). A caller that got true calls DoneAlone when its call has
// returned. See batch.Queue.TryAlone.
func (p *Pipeline) TryAlone() bool { return p.queue.TryAlone() }

// DoneAlone gives back the lane TryAlone took.
func (p *Pipeline) DoneAlone() { p.queue.DoneAlone() }
