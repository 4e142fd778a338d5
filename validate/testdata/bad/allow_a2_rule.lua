-- want: lua/key-from-argv lua/bad-annotation
-- Undeclared key access is an enforced prohibition (spec 000 §Axioms A2): no annotation
-- waives it, and trying is itself a finding.
-- slotgate:allow lua/key-from-argv the caller always passes a tagged key
return redis.call('GET', ARGV[1])
