package gardener

import (
	"context"
	"errors"

	"github.com/kyma-project/hap-reconciler/internal/gardener/wire"
	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// listShoots hands every shoot of the namespace to fn, page by page.
//
// When the list has to start over (its continue token expired), onReset is
// called first and the caller must forget every shoot fn received so far:
// afterwards fn sees each shoot exactly once. Any error ends the list and is
// returned; the caller must then discard what it received.
func (c *Client) listShoots(ctx context.Context, onReset func(), fn func(hap.Shoot) error) (ListStats, error) {
	if onReset == nil || fn == nil {
		return ListStats{}, errors.New("list shoots: onReset and fn must not be nil")
	}
	return listPaged(ctx, c, c.shoots, onReset, func(item wire.ShootItem) error {
		return fn(item.Shoot())
	})
}
