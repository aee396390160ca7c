package devenv

import (
	"fmt"
	"io"
)

// logf writes one line to say, after who says it ("devenv", "cluster"),
// when say is not nil.
func logf(say io.Writer, who, format string, args ...any) {
	if say != nil {
		_, _ = fmt.Fprintf(say, who+": "+format+"\n", args...)
	}
}
