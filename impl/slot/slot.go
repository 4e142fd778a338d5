// Package slot is the cluster key-distribution model: which of the 16384
// hash slots a key lives in.
//
// Spec 000 §Axioms (A1): a key's slot is CRC16(key) mod 16384; if the key
// contains a non-empty {...} hash tag, only the tagged substring is hashed.
// The algorithm is the Valkey cluster specification's "Key distribution
// model" (CRC16-CCITT/XMODEM, polynomial 0x1021, initial value 0).
package slot

// Count is the number of hash slots in a Valkey cluster.
const Count = 16384

// crcTable is the CRC16-CCITT (XMODEM) lookup table, built once.
var crcTable = func() [256]uint16 {
	var t [256]uint16
	for i := range t {
		crc := uint16(i) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
		t[i] = crc
	}
	return t
}()

// CRC16 is the checksum the cluster spec uses for slot assignment.
func CRC16(b []byte) uint16 {
	var crc uint16
	for _, c := range b {
		crc = crc<<8 ^ crcTable[byte(crc>>8)^c]
	}
	return crc
}

// HashTag returns the part of key that is hashed: the substring between the
// first '{' and the first '}' after it, when that substring is non-empty;
// otherwise the whole key. So "{}" and "a{}b" hash whole, "{{a}}" hashes
// "{a", and "a{b}{c}" hashes "b".
func HashTag(key string) string {
	for i := 0; i < len(key); i++ {
		if key[i] != '{' {
			continue
		}
		for j := i + 1; j < len(key); j++ {
			if key[j] == '}' {
				if j == i+1 {
					return key
				}
				return key[i+1 : j]
			}
		}
		return key
	}
	return key
}

// Of returns the hash slot of key.
func Of(key string) int {
	return int(CRC16([]byte(HashTag(key)))) % Count
}

// Same reports whether all keys map to one slot (A2's declared-keys check).
func Same(keys ...string) bool {
	for i := 1; i < len(keys); i++ {
		if Of(keys[i]) != Of(keys[0]) {
			return false
		}
	}
	return true
}
