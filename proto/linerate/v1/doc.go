// Package lineratev1 is the gRPC API between the linerate coordinator and
// its agents: the Agent service, its messages, and the client and server
// stubs. Everything here except this file is generated from agent.proto by
// `make proto` (pinned protoc-gen-go and protoc-gen-go-grpc); `make test`
// fails when the generated code is stale. agent.proto documents the
// semantics: leases, the order of a run, errors as status codes, and the
// standard health service every server registers under
// Agent_ServiceDesc.ServiceName ("linerate.v1.Agent") and "".
package lineratev1
