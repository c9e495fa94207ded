package deprules

// Words are the names the package table's "may import" column uses for
// what is not a package of the module (those are written as `path`
// patterns, module-relative): each word and the import paths it stands
// for. A word not here is an error in the table, so the column can only
// say what the check understands.
var Words = map[string][]string{
	"std":               {Std},
	"the module":        {"..."},
	"x/sys":             {"golang.org/x/sys/..."},
	"x/net":             {"golang.org/x/net/..."},
	"hclog":             {"github.com/hashicorp/go-hclog"},
	"serf":              {"github.com/hashicorp/serf/..."},
	"memberlist":        {"github.com/hashicorp/memberlist/..."},
	"sockaddr":          {"github.com/hashicorp/go-sockaddr/..."},
	"grpc":              {"google.golang.org/grpc/..."},
	"protobuf":          {"google.golang.org/protobuf/..."},
	"ebpf":              {"github.com/cilium/ebpf/..."},
	"netlink":           {"github.com/vishvananda/netlink/..."},
	"vishvananda/netns": {"github.com/vishvananda/netns/..."},
	"prometheus":        {"github.com/prometheus/client_golang/..."},
	"cobra":             {"github.com/spf13/cobra/..."},
	"pflag":             {"github.com/spf13/pflag/..."},
	"yaml":              {"gopkg.in/yaml.v3"},
	"go-cmp":            {"github.com/google/go-cmp/..."},
	"nftables":          {"github.com/google/nftables/..."},
}
