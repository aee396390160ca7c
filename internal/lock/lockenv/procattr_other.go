//go:build !linux

package lockenv

import "syscall"

// sysProcAttr runs a server as cred (when not nil).
func sysProcAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred}
}
