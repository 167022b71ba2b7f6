package kit

// Application states of porta (app/models/contract/states.rb).
const (
	AppLive      = "live"
	AppSuspended = "suspended"
)
