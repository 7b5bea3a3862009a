package testbed

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

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
