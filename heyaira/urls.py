from django.contrib import admin
from django.contrib.auth.views import LogoutView
from django.urls import include, path

from heyaira import views
from identity.signin import SignInView

urlpatterns = [
    path("healthz", views.healthz, name="healthz"),
    path("readyz", views.readyz, name="readyz"),
    path("admin/", admin.site.urls),
    path("accounts/login/", SignInView.as_view(), name="login"),
    path("accounts/logout/", LogoutView.as_view(), name="logout"),
    path("api/", include("continuity.api.urls")),
    # OAuth: discovery documents at the origin root, endpoints under /oauth/ (docs/oauth.md).
    path("", include("identity.urls")),
    # The pages people use: the front door at /.
    path("", include("web.urls")),
]
