from django.urls import path

from continuity.api.views import IdentityView

urlpatterns = [
    path("identity", IdentityView.as_view(), name="api-identity"),
]
