package lockenv

import "syscall"

// sysProcAttr runs a server as cred (when not nil) and kills it when the
// test binary dies without stopping it (a test timeout's panic, a kill).
func sysProcAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
}
