-- Forgets the leases past their expiry: the next claim of the GA and pool
-- would take such a lease over in place, and a lease renewed meanwhile is
-- re-checked on its newest version and kept.
DELETE FROM {{schema}}.claim_leases WHERE expires_at <= now()
