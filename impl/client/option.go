package client

import "reflect"

// setOption sets the field name of the options struct that opts points to,
// when the linked release of the client library has that field, and
// reports whether it did. impl builds against more than one release of each
// library (Pool.Version names the one a run linked): an option a later
// release added (go-redis ClusterOptions.ClusterStateReloadInterval since
// v9.21, FailingTimeoutSeconds; valkey-go SentinelOption.
// TopologyRefreshInterval) must not stop an older release from building.
// Without the field the library's own behaviour stays, and the row that
// needs the option judges it as it is.
func setOption(opts any, name string, v any) bool {
	f := reflect.ValueOf(opts).Elem().FieldByName(name)
	val := reflect.ValueOf(v)
	if !f.IsValid() || !f.CanSet() || !val.Type().AssignableTo(f.Type()) {
		return false
	}
	f.Set(val)
	return true
}
