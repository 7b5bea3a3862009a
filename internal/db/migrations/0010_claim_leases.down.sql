DROP TABLE claim_leases;
