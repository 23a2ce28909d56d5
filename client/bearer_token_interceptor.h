// BearerTokenInterceptor: a client interceptor that adds
// `authorization: Bearer <token>` to the initial metadata of every call on the
// channel (flashtickd's TokenAuthProcessor checks it). An interceptor rather
// than grpc::AccessTokenCredentials because gRPC drops call credentials on
// plaintext channels, and flashtickd may run plaintext behind a TLS proxy.
#pragma once

#include <grpcpp/support/client_interceptor.h>

#include <memory>
#include <string>
#include <vector>

namespace flashtick {

class BearerTokenInterceptor : public grpc::experimental::Interceptor {
 public:
  explicit BearerTokenInterceptor(const std::string* header_value) : header_value_(header_value) {}
  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override;

 private:
  const std::string* header_value_;  // owned by the factory, which outlives calls
};

// The channel's interceptor list holding one factory for `token`.
std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>>
MakeBearerTokenInterceptors(const std::string& token);

}  // namespace flashtick
