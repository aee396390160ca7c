package redislock

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/seatlock/seatlock/internal/lock/redisbatch"
)

// script is a Lua script with its hash boxed once: boxing a string in an
// interface allocates, and every call sends the hash.
type script struct {
	*redis.Script
	sha any
}

func newScript(src string) *script {
	s := redis.NewScript(src)
	return &script{Script: s, sha: s.Hash()}
}

// Room in a scriptCall: the acquire scripts take the most, two keys and
// four arguments (three of them strings, with the token).
const (
	maxCallArgs    = 3 + 2 + 4 // EVALSHA, hash, key count, KEYS, ARGV
	maxCallStrings = 3
)

// scriptCall is one script call with every argument in one allocation: a
// string goes to go-redis as a pointer into it (go-redis writes a *string
// as the string), and so does a large integer, so that no argument is
// boxed on its own. Keys come first, then the arguments.
type scriptCall struct {
	script *script
	args   [maxCallArgs]any
	strs   [maxCallStrings]string
	ints   [1]int64
	nargs  int
	nstrs  int
	nints  int
	nkeys  int
}

func newCall(s *script) *scriptCall {
	return &scriptCall{script: s, nargs: 3}
}

// key adds a key; keys precede every argument.
func (c *scriptCall) key(k string) {
	c.str(k)
	c.nkeys++
}

func (c *scriptCall) str(s string) {
	c.strs[c.nstrs] = s
	c.args[c.nargs] = &c.strs[c.nstrs]
	c.nstrs++
	c.nargs++
}

// arg adds a value already boxed (see scriptTTL).
func (c *scriptCall) arg(v any) {
	c.args[c.nargs] = v
	c.nargs++
}

// int adds an integer; the ones below 256 box without allocating.
func (c *scriptCall) int(n int64) {
	if n >= 0 && n < 256 {
		c.arg(n)
		return
	}
	c.ints[c.nints] = n
	c.arg(&c.ints[c.nints])
	c.nints++
}

// laid is c as one EVALSHA command.
func (c *scriptCall) laid() redisbatch.Laid {
	c.args[0], c.args[1], c.args[2] = "evalsha", c.script.sha, c.nkeys
	return redisbatch.Laid{Script: c.script.Script, Args: c.args[:c.nargs]}
}

// call runs c: alone on the caller's connection when the backend does not
// batch or one of its lanes is free and nobody waits, else in the next
// batch (package redisbatch). A client that cannot take a laid-out command
// gets it through redis.Script.Run.
func (b *Backend) call(ctx context.Context, c *scriptCall) *redis.Cmd {
	switch {
	case b.doer == nil:
		return c.script.Run(ctx, b.client, c.strs[:c.nkeys], c.args[3+c.nkeys:c.nargs]...)
	case b.pipeline == nil:
		return redisbatch.RunLaid(ctx, b.doer, c.laid())
	case !b.pipeline.TryAlone():
		return b.pipeline.Lay(ctx, c.laid())
	}
	defer b.pipeline.DoneAlone()
	return redisbatch.RunLaid(ctx, b.doer, c.laid())
}
