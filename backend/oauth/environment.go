package oauth

import (
	"fmt"
	"slices"
)

// SetEnvironment changes the environment authorization id belongs to
// (development, staging or production), as the person corrects it in the
// inventory; custody names it on cards and in audit entries.
func (m *Custody) SetEnvironment(id, env string) error {
	if !slices.Contains(Environments, env) {
		return fmt.Errorf("%w: environment must be development, staging or production", ErrInvalid)
	}
	res := m.db.Model(&row{}).Where("id = ?", id).Update("environment", env)
	if res.Error != nil {
		return fmt.Errorf("oauth: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	m.changed()
	return nil
}
