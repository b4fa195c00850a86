package model

import (
	"fmt"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/schema"
)

// CreateDemoContact makes a contact interested in every check (contacts_for:ALL), without
// rules, with one medium: what the embedded demo system alerts.
func CreateDemoContact(conn redis.Conn, keys schema.Keys, id, medium, address string) error {
	conn.Send("MULTI")
	conn.Send("HSET", keys.Contact(id), "first_name", "Operator", "last_name", "(demo)")
	conn.Send("HSET", keys.ContactMedia(id), medium, address)
	conn.Send("SADD", keys.ContactsFor(schema.AllContactsID), id)
	conn.Send("SADD", keys.AllContacts(), id)
	if _, err := conn.Do("EXEC"); err != nil {
		return fmt.Errorf("create contact %s: %w", id, err)
	}
	return nil
}
