"""Display formats for the admin and any template that shows a datetime with Django's own
formats (settings.FORMAT_MODULE_PATH): times carry their zone, as the web pages' do."""
