-- want: lua/key-literal
-- numkeys=0 style: reads a tagged and an untagged key, declares none (spec A2, "verified live").
return {redis.call('GET', '{s1}:lease'), redis.call('GET', 'gen:s1')}
