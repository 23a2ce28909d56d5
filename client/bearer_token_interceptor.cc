// Adds the bearer token to every call (see bearer_token_interceptor.h).
#include "client/bearer_token_interceptor.h"

namespace flashtick {
namespace {

using grpc::experimental::InterceptionHookPoints;

class BearerTokenFactory : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit BearerTokenFactory(const std::string& token) : header_value_("Bearer " + token) {}
  grpc::experimental::Interceptor* CreateClientInterceptor(
      grpc::experimental::ClientRpcInfo* /*info*/) override {
    return new BearerTokenInterceptor(&header_value_);
  }

 private:
  const std::string header_value_;
};

}  // namespace

void BearerTokenInterceptor::Intercept(grpc::experimental::InterceptorBatchMethods* methods) {
  if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_INITIAL_METADATA)) {
    methods->GetSendInitialMetadata()->emplace("authorization", *header_value_);
  }
  methods->Proceed();
}

std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>>
MakeBearerTokenInterceptors(const std::string& token) {
  std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>> list;
  list.push_back(std::make_unique<BearerTokenFactory>(token));
  return list;
}

}  // namespace flashtick
