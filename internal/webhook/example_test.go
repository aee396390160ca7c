package webhook_test

import (
	"fmt"
	"time"

	"github.com/seatlock/seatlock/internal/webhook"
)

// Signing a message as the Standard Webhooks specification's test vector
// does. A delivery sends the signature in the webhook-signature header,
// with the id in webhook-id and the time in webhook-timestamp; Sender.Send
// does it all.
func ExampleSign() {
	secret, err := webhook.ParseSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if err != nil {
		panic(err)
	}
	fmt.Println(secret) // never the key
	fmt.Println(webhook.Sign("msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`), secret))
	// Output:
	// whsec_REDACTED
	// v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=
}
