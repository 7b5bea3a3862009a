package bench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// PrintTable writes the report as the tables docs/benchmarks.md shows.
func PrintTable(w io.Writer, r *Report) error {
	m := r.Machine
	fmt.Fprintf(w, "Machine: %d CPUs, %s, %.1f GB memory, Linux %s, %s\n", m.CPUs, m.CPUModel, m.MemoryGB, m.Kernel, m.GoVersion)
	fmt.Fprintf(w, "Binary: %s\n", r.Binary)
	fmt.Fprintf(w, "Settings: %d picks per path, median of %d runs (XL: 3, see pairs) and %d watched cycles, page size %d, seed %d\n\n",
		r.Settings.Picks, r.Settings.Repeats, r.Settings.SteadyCycles, r.Settings.PageSize, r.Settings.Seed)
	if args := r.Settings.APIServerArgs; len(args) > 0 {
		fmt.Fprintf(w, "kube-apiserver and gardener-apiserver started with %s\n", strings.Join(args, " "))
	}

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	row := func(cells ...any) {
		parts := make([]string, len(cells))
		for i, c := range cells {
			parts[i] = fmt.Sprint(c)
		}
		fmt.Fprintln(tw, strings.Join(parts, "\t")+"\t")
	}
	section := func(title string) {
		_ = tw.Flush()
		fmt.Fprintf(w, "\n%s\n", title)
	}

	section("Landscape")
	row("size", "shoots", "bindings", "GAs", "instance rows", "active", "served KB/shoot", "load s")
	for _, s := range r.Sizes {
		l := s.Landscape
		row(s.Size.Name, l.Shoots, l.Bindings, l.GlobalAccounts, l.InstanceRows, l.ActiveInstances, f1(l.ServedKBPerShoot), f1(float64(l.LoadSeconds)))
	}

	section("Full run (child process, all jobs, release dry-run) against the floor (pages in the job's format) and the JSON floor")
	row("size", "format", "run s", "CPU s", "peak RSS MB", "peak heap MB", "max live MB", "floor s", "JSON floor s", "run/floor", "run/JSON floor", "gather/floor", "pairs", "each pair's run/floor", "ms per 1000 shoots")
	for _, s := range r.Sizes {
		row(s.Size.Name, shortFormat(s.Floor.Format), f2(float64(s.Run.Wall)), f2(float64(s.Run.CPU)), f0(s.Run.MaxRSSMB), s.Run.PeakHeapMB, s.Run.MaxLiveMB,
			f2(float64(s.Floor.Wall)), f2(float64(s.JSONFloor.Wall)), f2(s.Ratios.RunOverFloor)+"x", f2(s.Ratios.RunOverJSONFloor)+"x",
			f2(s.Ratios.GatherOverFloor)+"x", len(s.Pairs), pairRatios(s.Pairs), f0(s.Ratios.RunMillisPer1000Shoots))
	}

	section("CPU per 1000 shoots, ms: the job's run, and etcd and the API servers serving it")
	row("size", "job", "servers", "floor shoot bytes", "JSON floor shoot bytes")
	for _, s := range r.Sizes {
		row(s.Size.Name, f0(s.Ratios.RunCPUMillisPer1000Shoots), f0(s.Ratios.ServerCPUMillisPer1000Shoots), s.Floor.Shoots.Bytes, s.JSONFloor.Shoots.Bytes)
	}

	section("Run phases, seconds (the three reads overlap; floor parts for comparison)")
	row("size", "startup", "list shoots", "list bindings", "DB counts", "decide", "write", "exit", "floor shoots", "floor bindings", "floor count")
	for _, s := range r.Sizes {
		p := s.Run.Phases
		row(s.Size.Name, f2(float64(p.Startup)), f2(float64(p.ListShoots)), f2(float64(p.ListBindings)), f2(float64(p.ReadDatabase)),
			f2(float64(p.Decide)), f2(float64(p.Write)), f2(float64(p.Exit)),
			f2(float64(s.Floor.Shoots.Seconds)), f2(float64(s.Floor.Bindings.Seconds)), f2(float64(s.Floor.CountQuery)))
	}

	if rw := r.Rewrites; rw.Load.Bindings > 0 {
		section(fmt.Sprintf("Picks while the candidate table is rewritten (%d pickers, %d bindings, a rewrite every %ss changing %.0f%% of the rows, %d rewrites, median %s ms, %ss)",
			rw.Load.Pickers, rw.Load.Bindings, f1(float64(rw.Load.Every)), rw.Load.ChangedShare*100, rw.Load.Rewrites, f1(float64(rw.Load.RewriteMedian)), f1(float64(rw.Load.Duration))))
		row("picks", "count", "p50 ms", "p99 ms", "p99.9 ms", "max ms")
		for _, t := range []struct {
			name string
			t    PickTail
		}{{"during rewrites", rw.During}, {"outside rewrites", rw.Outside}} {
			row(t.name, t.t.Picks, f2(float64(t.t.P50)), f2(float64(t.t.P99)), f2(float64(t.t.P999)), f2(float64(t.t.Max)))
		}
		row("over 50 ms", rw.OverTarget, "", "", "", "")
		row("lock waits over 20 ms", rw.LockWaits, "over 50 ms:", rw.LockWaitsOver50, "longest ms:", f1(float64(rw.LongestLockWait)))
	}

	section("serve after the first list: a cycle over all jobs with watched shoots and bindings; a binding claimed until the table lists it")
	row("size", "first fill s", "cached fill floor s", "pages", "cache heap MB", "cycle s", "cycle CPU s", "cycle/run wall", "cycle/run CPU", "change p50 s", "change p99 s", "change max s")
	for _, s := range r.Sizes {
		st := s.Steady
		row(s.Size.Name, f2(float64(st.FirstFill)), f2(float64(st.CachedFill.Wall)), st.CachedFill.Shoots.Pages, f1(st.CacheHeapMB), f3(float64(st.Wall)), f3(float64(st.CPU)),
			pct(s.Ratios.SteadyOverRun), pct(s.Ratios.SteadyCPUOverRunCPU),
			f2(float64(st.ChangeToTable.P50)/1000), f2(float64(st.ChangeToTable.P99)/1000), f2(float64(st.ChangeToTable.Max)/1000))
	}

	section("Picking a binding: KEB's live path (label LIST + a count per binding) against the one-query read, ms")
	row("size", "path", "picks", "p50", "p99", "max", "over 1-query p50", "over 1-query p99")
	for _, s := range r.Sizes {
		p, q := s.Picks, s.Ratios
		for _, path := range []struct {
			name     string
			l        Latency
			p50, p99 float64
		}{
			{"KEB live, consistent list", p.LivePath, q.LivePathOverOneQueryP50, q.LivePathOverOneQueryP99},
			{"KEB live, cached list", p.LivePathCachedList, q.CachedLivePathOverOneQueryP50, q.CachedLivePathOverOneQueryP99},
			{fmt.Sprintf("one query (NextBinding), table rewritten every %d", p.TableRewriteEvery), p.OneQuery, 1, 1},
		} {
			row(s.Size.Name, path.name, path.l.Picks, f3(float64(path.l.P50)), f3(float64(path.l.P99)), f3(float64(path.l.Max)),
				f0(path.p50)+"x", f0(path.p99)+"x")
		}
	}
	_ = tw.Flush()

	fmt.Fprintf(w, "\nTargets\n")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, t := range r.Targets {
		verdict := "met"
		if !t.Met {
			verdict = "NOT MET"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.What, t.Want, t.Got, verdict)
	}
	return tw.Flush()
}

// shortFormat names a content type in a table cell.
func shortFormat(contentType string) string {
	switch {
	case strings.Contains(contentType, "protobuf"):
		return "protobuf"
	case strings.Contains(contentType, "json"):
		return "JSON"
	}
	return "-"
}

// pairRatios lists each pair's run/floor in the order measured.
func pairRatios(pairs []Pair) string {
	parts := make([]string, len(pairs))
	for i, p := range pairs {
		parts[i] = f2(p.RunOverFloor)
	}
	return strings.Join(parts, " ")
}

func f0(x float64) string  { return fmt.Sprintf("%.0f", x) }
func f1(x float64) string  { return fmt.Sprintf("%.1f", x) }
func f2(x float64) string  { return fmt.Sprintf("%.2f", x) }
func f3(x float64) string  { return fmt.Sprintf("%.3f", x) }
func pct(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }
