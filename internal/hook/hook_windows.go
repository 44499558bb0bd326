//go:build windows

package hook

import (
	"context"
	"os/exec"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

func shell(command string) *exec.Cmd { return exec.Command("cmd.exe", "/C", command) }

// group is a job object the command's process is put in: every process it starts joins it, and closing the job
// (KILL_ON_JOB_CLOSE) or terminating it ends them all.
type group struct{ job windows.Handle }

func start(cmd *exec.Cmd, _ string) (*group, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return nil, err
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		windows.CloseHandle(job)
		return nil, err
	}
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(cmd.Process.Pid))
	if err == nil {
		err = windows.AssignProcessToJobObject(job, h)
		windows.CloseHandle(h)
	}
	if err != nil {
		cmd.Process.Kill()
		windows.CloseHandle(job)
		return nil, err
	}
	return &group{job: job}, nil
}

// basicAccounting is JOBOBJECT_BASIC_ACCOUNTING_INFORMATION, which x/sys/windows does not declare.
type basicAccounting struct {
	TotalUserTime, TotalKernelTime, ThisPeriodTotalUserTime, ThisPeriodTotalKernelTime int64
	TotalPageFaultCount, TotalProcesses, ActiveProcesses, TotalTerminatedProcesses     uint32
}

// alive reports whether any process is left in the job.
func (g *group) alive() bool {
	var info basicAccounting
	err := windows.QueryInformationJobObject(g.job, windows.JobObjectBasicAccountingInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)), nil)
	return err == nil && info.ActiveProcesses > 0
}

func (g *group) reap(ctx context.Context, grace time.Duration) {
	deadline := time.Now().Add(grace)
	for g.alive() && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
	}
	g.kill()
}

func (g *group) kill() { windows.TerminateJobObject(g.job, 1) }

func (g *group) close() { windows.CloseHandle(g.job) }

// harden: the job object is the bound on Windows (KILL_ON_JOB_CLOSE takes every process started in it).
func harden() {}
