package provisioning

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Gardener is what Client.NextBinding asks Gardener, with KEB's own client
// (common/gardener: GetCredentialsBinding, GetCredentialsBindings), to
// confirm what the table proposes: the table is as of the job's snapshot,
// Gardener is now.
type Gardener interface {
	// CredentialsBinding returns the named binding of KEB's namespace as
	// Gardener has it now; found is false when it does not exist.
	CredentialsBinding(ctx context.Context, name string) (b Binding, found bool, err error)
	// CredentialsBindings lists the bindings of KEB's namespace that
	// labelSelector selects, in the API server's order.
	CredentialsBindings(ctx context.Context, labelSelector string) ([]Binding, error)
}

// Binding is what the confirmation reads of a CredentialsBinding.
type Binding struct {
	Name   string
	Labels map[string]string
	// ProviderType is the binding's provider.type; "" when unknown.
	ProviderType string
}

// confirmAttempts bounds how many of the table's proposals Gardener may
// reject in one call before NextBinding hands the request to KEB's live
// path (ErrRejected): each rejection is withdrawn from the table, so a
// second proposal is another binding.
const confirmAttempts = 3

// NextBinding is the table's pick for req, confirmed by Gardener, within
// the client's timeout for each statement and each call to Gardener. When
// the table had seen every change of Gardener's bindings within SeenWithin
// (serve's watch proves it), the answer stands as the table gives it, with
// no call to Gardener, as KEB's live path trusts a list it made moments
// before; Pick.Confirmed says which it was. Confirmed by Gardener:
//   - Pick.Binding: Gardener shows the binding as KEB's selector for req
//     returns it now (tenantSelector), of the runtime's provider; provision
//     on it. A binding Gardener rejects is withdrawn from the table (until
//     a snapshot taken after shows it fit again) and the table proposes the
//     next one, up to confirmAttempts; then ErrRejected.
//   - Pick.ClaimNew: Gardener lists no binding of the GA the table does not
//     hold (Pick.Held), all at their limit by KEB's count now; KEB claims
//     one. With HoldClaims, req's instance holds the claim of the GA and
//     pool (a lease of ClaimLease), and KEB then calls RecordClaim (or
//     AbandonClaim when it could not claim).
//   - ErrClaimPending (a *ClaimPendingError), with HoldClaims: another request holds the
//     claim of the GA and pool; KEB retries the step after its RetryAfter
//     (at most ClaimRetry, at most until the lease expires), and the retry
//     is placed on the claimed binding once it is recorded, or takes the
//     claim over once the lease expired. NextBinding never waits for it.
//   - ErrGuarded: Gardener lists exactly the table's bindings of the GA,
//     and none holds an active instance of the GA: KEB's guard; KEB fails
//     the provisioning.
//   - ErrClaimedSince: Gardener's bindings of the GA are not the table's:
//     KEB takes its live path.
//   - ErrNoKEBIndex: KEB's instances table lacks the valid index the pick
//     counts through (schema.KEBIndexUp), as the client last looked (at
//     most a minute ago); nothing is asked of the table or Gardener.
//     KEB takes its live path.
//   - ErrSchemaSkew: the job's schema is at a version this module does not
//     read (schema.ModuleReads): read at this pick, or, when the client
//     last found it readable, at most a minute ago and with no statement
//     failed since; nothing is asked of the table or Gardener. KEB takes
//     its live path.
//   - ErrStale, ErrSharedPoolEmpty, ErrRejected, and any error of the
//     database or Gardener: KEB takes its live path (LivePath).
//
// KEB's instance row must exist before the call (KEB creates it at the
// provision request): a reservation counts only while that row is active
// and has no binding yet, so picking before the row exists would let the
// binding fill past its limit.
func (c *Client) NextBinding(ctx context.Context, req Request) (Pick, error) {
	if c.DB != nil {
		if err := c.checkKEBIndex(ctx); err != nil {
			return Pick{}, fmt.Errorf("next binding for instance %q: %w", req.InstanceID, err)
		}
		if err := c.checkSchemaVersion(ctx); err != nil {
			return Pick{}, fmt.Errorf("next binding for instance %q: %w", req.InstanceID, err)
		}
	}
	pick, err := c.confirmedProposal(ctx, req)
	switch {
	case err != nil || !pick.ClaimNew:
		return pick, err
	case c.HoldClaims:
		return c.holdClaim(ctx, req)
	}
	return c.confirmedClaimNew(ctx, req, pick)
}

// confirmedClaimNew is the table's ClaimNew as it stands when the table had
// seen Gardener recently, else once Gardener's list of the GA's bindings
// confirms it.
func (c *Client) confirmedClaimNew(ctx context.Context, req Request, pick Pick) (Pick, error) {
	if c.trusts(pick) {
		return pick, nil
	}
	if err := c.confirmHeld(ctx, req, pick.Held, false); err != nil {
		return Pick{TableAge: pick.TableAge}, err
	}
	pick.Confirmed = true
	return pick, nil
}

// confirmedProposal is the table's proposal for req, confirmed by
// Gardener, as NextBinding describes it, without the claim's lease.
func (c *Client) confirmedProposal(ctx context.Context, req Request) (Pick, error) {
	var rejected []string
	for attempt := 0; attempt < confirmAttempts; attempt++ {
		pick, err := c.propose(ctx, req, c.reserveWithin())
		switch {
		case err == nil && pick.Binding != "" && c.trusts(pick):
			return pick, nil
		case err == nil && pick.Binding != "":
			reason, err := c.confirmBinding(ctx, req, pick.Binding)
			switch {
			case err != nil:
				return Pick{TableAge: pick.TableAge}, err
			case reason == "":
				pick.Confirmed = true
				return pick, nil
			}
			rejected = append(rejected, fmt.Sprintf("%s (%s)", pick.Binding, reason))
			if err := c.reject(ctx, req, pick.Binding, reason); err != nil {
				return Pick{}, err
			}
		case isGuarded(err) && c.trusts(pick):
			return pick, err
		case isGuarded(err):
			if cerr := c.confirmHeld(ctx, req, pick.Held, true); cerr != nil {
				return Pick{TableAge: pick.TableAge}, cerr
			}
			pick.Confirmed = true
			return pick, err
		default:
			return pick, err
		}
	}
	return Pick{}, fmt.Errorf("next binding for instance %q: Gardener rejected %s: %w", req.InstanceID, strings.Join(rejected, ", "), ErrRejected)
}

// confirmBinding asks Gardener for the proposed binding and says why it is
// unfit for req, "" when it is fit.
func (c *Client) confirmBinding(ctx context.Context, req Request, name string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout())
	defer cancel()
	if c.Gardener == nil {
		return "", unconfirmed(req)
	}
	b, found, err := c.Gardener.CredentialsBinding(ctx, name)
	switch {
	case err != nil:
		return "", fmt.Errorf("next binding for instance %q: confirm binding %q in Gardener: %w", req.InstanceID, name, err)
	case !found:
		return "it no longer exists", nil
	}
	return req.rejects(b), nil
}

// confirmHeld asks Gardener for the GA's bindings of the pool, with KEB's
// own selector, and answers ErrClaimedSince unless the table's answer is
// KEB's on them. ClaimNew holds when Gardener lists no binding the table
// does not hold: every binding KEB's live path would count is then at its
// limit by KEB's count now (those the table holds and Gardener no longer
// lists, dirty or taken since, KEB would not use either). The guard also
// counts the bindings, so it holds only when the two lists are the same.
func (c *Client) confirmHeld(ctx context.Context, req Request, held []string, guard bool) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout())
	defer cancel()
	if c.Gardener == nil {
		return unconfirmed(req)
	}
	listed, err := c.Gardener.CredentialsBindings(ctx, req.tenantSelector())
	if err != nil {
		return fmt.Errorf("next binding for instance %q: list the global account's bindings in Gardener: %w", req.InstanceID, err)
	}
	inGardener := make([]string, 0, len(listed))
	for _, b := range listed {
		inGardener = append(inGardener, b.Name)
	}
	slices.Sort(inGardener)
	if slices.Equal(inGardener, held) || !guard && unknownTo(held, inGardener) == "" {
		return nil
	}
	return fmt.Errorf("next binding for instance %q, global account %q: Gardener lists %v with %q, the table %v: %w",
		req.InstanceID, req.GlobalAccountID, inGardener, req.tenantSelector(), held, ErrClaimedSince)
}

// unconfirmed is the answer of a client without Gardener to a table that
// had not seen Gardener recently enough to be trusted.
func unconfirmed(req Request) error {
	return fmt.Errorf("next binding for instance %q: %w", req.InstanceID, ErrUnconfirmed)
}

// unknownTo names the first of listed that held lacks, "" when none.
func unknownTo(held, listed []string) string {
	for _, name := range listed {
		if !slices.Contains(held, name) {
			return name
		}
	}
	return ""
}

// reject withdraws a binding Gardener rejected, so that the table offers it
// to nobody until a snapshot taken after shows it fit; the instance's
// reservation on it becomes void and the next proposal drops it.
func (c *Client) reject(ctx context.Context, req Request, name, reason string) error {
	why := fmt.Sprintf("Gardener rejected it for global account %q, pool %s (euAccess %t): %s", req.GlobalAccountID, req.HyperscalerType, req.EUAccess, reason)
	if err := c.withdraw(ctx, name, why); err != nil {
		return fmt.Errorf("next binding for instance %q: %w", req.InstanceID, err)
	}
	return nil
}
