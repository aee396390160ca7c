package main

import (
	"net"
	"time"
)

// listening: something accepts connections on 127.0.0.1:port.
func listening(port string) bool {
	conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", port), time.Second)
	if err != nil {
		return false
	}
	_ = conn.Close()
	return true
}
