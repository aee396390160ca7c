package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
	"time"
)

// Sign returns the webhook-signature header of a message: "v1," and the
// base64 HMAC-SHA256, keyed by each secret, of "{id}.{timestamp}.{body}",
// where timestamp is at in Unix seconds (the webhook-timestamp header).
// With two secrets, during a rotation, it carries both signatures,
// space-separated, so a receiver that knows either one accepts the
// message. Zero secrets are skipped; with none left the result is "".
func Sign(id string, at time.Time, body []byte, secrets ...Secret) string {
	var b strings.Builder
	for _, s := range secrets {
		if s.IsZero() {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		mac := hmac.New(sha256.New, s.bytes())
		mac.Write([]byte(id))
		mac.Write([]byte{'.'})
		mac.Write(strconv.AppendInt(nil, at.Unix(), 10))
		mac.Write([]byte{'.'})
		mac.Write(body)
		b.WriteString("v1,")
		b.WriteString(base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	}
	return b.String()
}
