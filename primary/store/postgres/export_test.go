package postgres

// MaxConns is the bound of d's pool, for tests.
func (d *Driver) MaxConns() int32 { return d.pool.Config().MaxConns }
