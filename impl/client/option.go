package client

import "reflect"

// setOption sets the exported field name of the options struct that opts
// points to, when the linked release of the client library has that field,
// and reports whether it did. Some settings impl relies on arrived in later
// releases (go-redis ClusterOptions.ClusterStateReloadInterval in v9.21,
// valkey-go SentinelOption.TopologyRefreshInterval in v1.0.7x): set by name,
// impl still compiles against an older release, so `slotgate run --client`
// can judge that release. Without the setting the release does what it does
// on its own, and the rows judge exactly that (spec 000 §Client
// Architecture: a client version is admitted by test, never assumed).
func setOption(opts any, name string, value any) bool {
	p := reflect.ValueOf(opts)
	if p.Kind() != reflect.Pointer || p.Elem().Kind() != reflect.Struct {
		return false
	}
	f := p.Elem().FieldByName(name)
	v := reflect.ValueOf(value)
	if !f.IsValid() || !f.CanSet() || !v.Type().AssignableTo(f.Type()) {
		return false
	}
	f.Set(v)
	return true
}
