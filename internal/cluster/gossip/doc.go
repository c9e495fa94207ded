// Package gossip is the serf member that every agent and the coordinator
// run: one configuration of addresses, keyring and logging, one key file
// format (ReadKey, WriteKey), the one backoff of every join retry
// (JoinBackoff), and a Stop that leaves the cluster before it shuts down.
//
// It is also the one home of what members say over serf: [Tags], the tag
// schema (Encode and DecodeTags are the only code that knows the keys,
// within serf's [MaxTagBytes]), [Role] and its constants, and
// [MemberEvent], serf's membership events as typed constants.
//
// serf's and memberlist's log lines go into the hclog.Logger passed in, at
// the level each line names; what a member logs once it has left is kept
// at debug level.
package gossip
