package webhook_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/seatlock/seatlock/internal/webhook"
)

func TestNewSecretRoundTrip(t *testing.T) {
	s := webhook.NewSecret()
	text := s.Reveal()
	encoded, ok := strings.CutPrefix(text, "whsec_")
	if !ok {
		t.Fatalf("Reveal() = %q, want the whsec_ prefix", text)
	}
	key, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil || len(key) != 32 {
		t.Fatalf("key: %d bytes, %v; want 32 bytes of standard base64", len(key), err)
	}
	back, err := webhook.ParseSecret(text)
	if err != nil || back.Reveal() != text {
		t.Fatalf("ParseSecret(Reveal()) = %v; want the same secret", err)
	}
	if other := webhook.NewSecret(); other.Reveal() == text {
		t.Error("two NewSecret calls made the same key")
	}
	if s.IsZero() || !(webhook.Secret{}).IsZero() {
		t.Error("IsZero is wrong")
	}
}

func TestParseSecretAcceptsTheSpecificationsRange(t *testing.T) {
	for _, n := range []int{24, 32, 64} {
		text := "whsec_" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, n))
		if _, err := webhook.ParseSecret(text); err != nil {
			t.Errorf("a key of %d bytes: %v", n, err)
		}
	}
}

func TestParseSecretRejectsMalformed(t *testing.T) {
	key32 := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xfb}, 32))
	for _, tc := range []struct{ name, text string }{
		{"empty", ""},
		{"prefix alone", "whsec_"},
		{"no prefix", key32},
		{"wrong prefix case", "WHSEC_" + key32},
		{"not base64", "whsec_!!!!" + key32[4:]},
		{"URL-safe base64", "whsec_" + base64.URLEncoding.EncodeToString(bytes.Repeat([]byte{0xfb}, 32))},
		{"unpadded", "whsec_" + strings.TrimRight(key32, "=")},
		{"newline inside", "whsec_" + key32[:20] + "\n" + key32[20:]},
		{"trailing space", "whsec_" + key32 + " "},
		{"16 bytes", "whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 16))},
		{"65 bytes", "whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 65))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := webhook.ParseSecret(tc.text)
			if !errors.Is(err, webhook.ErrMalformedSecret) {
				t.Fatalf("ParseSecret = %v, want ErrMalformedSecret", err)
			}
			if len(tc.text) > 6 && strings.Contains(err.Error(), tc.text[6:]) {
				t.Errorf("the error quotes the secret: %v", err)
			}
		})
	}
}

// A secret never prints its key: not by fmt under any verb, not inside a
// struct, not in slog's text or JSON records.
func TestSecretRedacts(t *testing.T) {
	s := webhook.NewSecret()
	key := strings.TrimPrefix(s.Reveal(), "whsec_")
	type exported struct{ S webhook.Secret }
	type unexported struct{ s webhook.Secret }
	var printed []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%o", "%b"} {
		printed = append(printed, fmt.Sprintf(verb, s), fmt.Sprintf(verb, exported{s}), fmt.Sprintf(verb, unexported{s}),
			fmt.Sprintf(verb, &exported{s}))
	}
	printed = append(printed, s.String(), s.GoString(), fmt.Sprint(s), fmt.Sprintln(s))
	var logs bytes.Buffer
	slog.New(slog.NewTextHandler(&logs, nil)).Info("t", "secret", s, "in", exported{s})
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("t", "secret", s, "in", exported{s}, slog.Group("g", "s", s))
	printed = append(printed, logs.String())
	k := *revealBytes(t, s)
	decimal := fmt.Sprintf("%d %d %d %d", k[0], k[1], k[2], k[3]) // as fmt prints a []byte
	for _, p := range printed {
		if strings.Contains(p, key) || strings.Contains(p, string(k)) || strings.Contains(p, decimal) ||
			strings.Contains(p, fmt.Sprintf("%x", k)) {
			t.Errorf("printed the key: %s", p)
		}
	}
	if !strings.Contains(fmt.Sprint(s), "REDACTED") || !strings.Contains(logs.String(), `"secret":"whsec_REDACTED"`) {
		t.Errorf("no redaction mark: %s / %s", fmt.Sprint(s), logs.String())
	}
}

func revealBytes(t *testing.T, s webhook.Secret) *[]byte {
	t.Helper()
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s.Reveal(), "whsec_"))
	if err != nil {
		t.Fatal(err)
	}
	return &key
}
