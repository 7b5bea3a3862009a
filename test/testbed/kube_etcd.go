package testbed

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// etcdQuotaBytes is the test bed's etcd backend quota. etcd's default of
// 2 GiB is too small for the benchmark's 100,000-shoot landscape (about
// 24 KB per shoot as stored, plus the history of deleted ones); past the
// quota etcd raises a NOSPACE alarm and refuses every write. The quota is a
// limit, not a reservation: the data directory grows only with what is
// written.
const etcdQuotaBytes = 8 << 30

// etcdSnapshotCount is how many raft entries etcd keeps in memory before it
// snapshots and drops them. etcd's default of 100,000 would hold up to
// 100,000 whole objects in etcd's memory while a large landscape loads; the
// test bed needs no long raft log, having no peers to catch up.
const etcdSnapshotCount = 10000

// etcdArgs is etcd's command line: one member, data under dataDir. etcd 3.5
// takes the flags 3.4 took; its v2 API is off by default, so there is no
// --enable-v2 to turn off.
func etcdArgs(dataDir, clientURL, peerURL string) []string {
	return []string{
		"--name=testbed",
		"--data-dir=" + dataDir,
		"--listen-client-urls=" + clientURL,
		"--advertise-client-urls=" + clientURL,
		"--listen-peer-urls=" + peerURL,
		"--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=testbed=" + peerURL,
		"--quota-backend-bytes=" + strconv.FormatInt(etcdQuotaBytes, 10),
		"--snapshot-count=" + strconv.Itoa(etcdSnapshotCount),
		"--logger=zap",
		"--log-outputs=stderr",
	}
}

// CompactEtcd compacts etcd's history up to its current revision. Continue
// tokens handed out before then name a revision etcd no longer has, so the
// next page request with one fails with 410 Gone, as it does in production
// when a slow paged list outlives the API server's compaction interval.
func (k *Kube) CompactEtcd(ctx context.Context) error {
	client, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{k.etcdURL},
		DialTimeout: 5 * time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		return fmt.Errorf("connect to etcd at %s: %w", k.etcdURL, err)
	}
	defer client.Close()
	// Any read tells the current revision in its header.
	resp, err := client.Get(ctx, "/hap-testbed/compaction-probe")
	if err != nil {
		return fmt.Errorf("read etcd revision: %w", err)
	}
	rev := resp.Header.Revision
	_, err = client.Compact(ctx, rev, clientv3.WithCompactPhysical())
	if err != nil && !errors.Is(err, rpctypes.ErrCompacted) {
		return fmt.Errorf("compact etcd to revision %d: %w", rev, err)
	}
	return nil
}
