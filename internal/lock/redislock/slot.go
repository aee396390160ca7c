package redislock

import (
	"errors"
	"fmt"
	"strings"
)

// ErrCrossSlot reports keys for one AcquireAll that a Redis Cluster stores in
// different slots, which no single script can touch. Keys that share a hash
// tag ("lock:{order:7}:item:1", "lock:{order:7}:item:2") share a slot.
// It is returned on a standalone server too, so that code does not break the
// day its Redis becomes a cluster.
var ErrCrossSlot = errors.New("redislock: keys in different cluster slots")

// slotCount is the number of Redis Cluster hash slots.
const slotCount = 16384

// slot is the Redis Cluster hash slot of key: CRC16 (XMODEM) of its hash tag
// (the part between the first '{' and the next '}', if not empty), or of
// the whole key, modulo 16384.
func slot(key string) uint16 {
	if open := strings.IndexByte(key, '{'); open >= 0 {
		if end := strings.IndexByte(key[open+1:], '}'); end > 0 {
			key = key[open+1 : open+1+end]
		}
	}
	return crc16(key) % slotCount
}

// crc16 is CRC-16/XMODEM (polynomial 0x1021, initial value 0), the checksum
// Redis Cluster hashes keys with.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// sameSlot returns ErrCrossSlot, naming two keys, unless every storage key
// is in the slot of the first.
func sameSlot(keys, stored []string) error {
	want := slot(stored[0])
	for i, k := range stored[1:] {
		if slot(k) != want {
			return fmt.Errorf("%w: %q and %q (give them one hash tag, such as {schedule:7})", ErrCrossSlot, keys[0], keys[i+1])
		}
	}
	return nil
}
