package webhook_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/seatlock/seatlock/internal/webhook"
)

const authSecret = "0123456789abcdef0123456789abcdef"

func mustSealer(t *testing.T, authSecret string) *webhook.Sealer {
	t.Helper()
	s, err := webhook.NewSealer(authSecret)
	if err != nil {
		t.Fatalf("NewSealer: %v", err)
	}
	return s
}

func TestSealerRoundTrip(t *testing.T) {
	sl := mustSealer(t, authSecret)
	secret := webhook.NewSecret()
	sealed := sl.Seal(secret)
	if bytes.Contains(sealed, *revealBytes(t, secret)) {
		t.Fatal("the sealed bytes hold the key in clear")
	}
	if again := sl.Seal(secret); bytes.Equal(again, sealed) {
		t.Error("two seals of one secret are equal: the nonce is not random")
	}
	// A Sealer built again from the same AUTH_SECRET (another instance,
	// a restart) opens it.
	opened, err := mustSealer(t, authSecret).Open(sealed)
	if err != nil || opened.Reveal() != secret.Reveal() {
		t.Fatalf("Open = %v; want the sealed secret back", err)
	}
}

func TestSealerRefusesTampering(t *testing.T) {
	sl := mustSealer(t, authSecret)
	sealed := sl.Seal(webhook.NewSecret())
	for i := range sealed {
		for _, bit := range []byte{0x01, 0x80} {
			altered := bytes.Clone(sealed)
			altered[i] ^= bit
			if _, err := sl.Open(altered); !errors.Is(err, webhook.ErrUnseal) {
				t.Fatalf("byte %d, bit %#x flipped: Open = %v, want ErrUnseal", i, bit, err)
			}
		}
	}
	for _, broken := range [][]byte{nil, {}, sealed[:12], sealed[:len(sealed)-1], append(bytes.Clone(sealed), 0)} {
		if _, err := sl.Open(broken); !errors.Is(err, webhook.ErrUnseal) {
			t.Errorf("Open(%d bytes) = %v, want ErrUnseal", len(broken), err)
		}
	}
	if _, err := sl.Open(sl.Seal(webhook.Secret{})); !errors.Is(err, webhook.ErrUnseal) {
		t.Errorf("Open of the zero Secret's seal = %v, want ErrUnseal", err)
	}
}

func TestSealerRefusesAnotherKey(t *testing.T) {
	sealed := mustSealer(t, authSecret).Seal(webhook.NewSecret())
	other := mustSealer(t, authSecret[:31]+"X")
	if _, err := other.Open(sealed); !errors.Is(err, webhook.ErrUnseal) {
		t.Fatalf("Open under another AUTH_SECRET = %v, want ErrUnseal", err)
	}
	if _, err := webhook.NewSealer(authSecret[:31]); !errors.Is(err, webhook.ErrShortAuthSecret) {
		t.Errorf("NewSealer with 31 bytes = %v, want ErrShortAuthSecret", err)
	}
}
