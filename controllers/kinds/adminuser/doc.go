// Package adminuser syncs AdminUsers: the tenant's own users, who sign in to its admin portal — admins,
// and members with the sections and products they may see. It never locks the tenant out: the user the
// token belongs to and the last active admin are never suspended, demoted or deleted.
package adminuser
