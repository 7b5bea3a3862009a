package bench

import (
	"os"
	"strconv"
	"strings"
)

// clockTicks is the unit of /proc/<pid>/stat's CPU times: USER_HZ, 100 on
// every Linux the test bed runs on.
const clockTicks = 100

// ServerCPU is the CPU time (user and system) the processes have used so
// far; a process that cannot be read counts nothing.
func ServerCPU(pids []int) Seconds {
	var ticks int64
	for _, pid := range pids {
		ticks += processTicks(pid)
	}
	return Seconds(float64(ticks) / clockTicks)
}

// processTicks reads utime and stime, fields 14 and 15 of /proc/<pid>/stat,
// counted after the command name, which may hold spaces and ends at the
// last ')'.
func processTicks(pid int) int64 {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(stat)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return utime + stime
}
