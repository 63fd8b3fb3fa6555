from django.urls import path

from web import views

urlpatterns = [
    path("", views.front_door, name="front_door"),
]
