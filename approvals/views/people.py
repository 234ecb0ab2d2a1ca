"""People, for admins: who they are, their roles, SSO identity, last sign-in and what they hold; a new person,
a change of roles, deactivating and reactivating. Every change is one function of actions/people."""

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.db.models import Count, IntegerField, OuterRef, Prefetch, Q, Subquery
from django.db.models.functions import Coalesce
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from approvals.actions import people
from approvals.db.models import BrowserSession
from approvals.roles import ROLES, is_admin
from approvals.signin.models import SsoIdentity
from approvals.views.decorators import refused_unless, role_required

ROLE_CHOICES = [(role, role) for role in ROLES]


def admins_only(view):
    return role_required(refused_unless(is_admin, "Only admins manage people.")(view))


class RolesForm(forms.Form):
    roles = forms.MultipleChoiceField(choices=ROLE_CHOICES, required=False, widget=forms.CheckboxSelectMultiple)


class PersonForm(RolesForm):
    username = forms.CharField(max_length=150, validators=[UnicodeUsernameValidator()])
    email = forms.EmailField(required=False)

    field_order = ["username", "email", "roles"]

    def clean_username(self):
        username = self.cleaned_data["username"]
        if get_user_model().objects.filter(username__iexact=username).exists():
            raise forms.ValidationError("Someone has this username already.")
        return username


def open_sessions():
    live = BrowserSession.objects.filter(user_id=OuterRef("pk"), expire_date__gt=timezone.now())
    counted = live.order_by().values("user_id").annotate(n=Count("pk")).values("n")
    return Coalesce(Subquery(counted, output_field=IntegerField()), 0)


def listed_people():
    """Every person with what they hold now: unexpired sessions, unrevoked keys, tokens and grants."""
    return (
        get_user_model()
        .objects.annotate(
            sessions=open_sessions(),
            api_keys_held=Count("api_keys", filter=Q(api_keys__revoked_at__isnull=True), distinct=True),
            tokens_held=Count("client_tokens", filter=Q(client_tokens__revoked_at__isnull=True), distinct=True),
            grants_held=Count(
                "client_tokens",
                filter=Q(client_tokens__revoked_at__isnull=True, client_tokens__oauth_grant__isnull=False),
                distinct=True,
            ),
        )
        .prefetch_related("groups", Prefetch("sso_identities", queryset=SsoIdentity.objects.order_by("pk")))
        .order_by("-is_active", "username")
    )


@never_cache
@admins_only
def people_list(request):
    form, created = PersonForm(), None
    if request.method == "POST":
        form = PersonForm(request.POST)
        if form.is_valid():
            data = form.cleaned_data
            try:
                created = people.create_person(data["username"], data["email"], data["roles"], request.user)
            except people.PeopleError as exc:
                messages.error(request, str(exc))
            else:
                form = PersonForm()
    context = {
        "people": listed_people(),
        "form": form,
        "created": created,
        "roles": ROLES,
        "passwords": settings.LOCAL_LOGIN,
        "no_passwords": people.NO_PASSWORDS,
    }
    return render(request, "approvals/people.html", context)


def person_of(pk):
    return get_object_or_404(get_user_model(), pk=pk)


@require_POST
@admins_only
def person_roles(request, pk):
    person, form = person_of(pk), RolesForm(request.POST)
    if form.is_valid():
        try:
            changed = people.change_roles(person, form.cleaned_data["roles"], request.user)
        except people.PeopleError as exc:
            messages.error(request, str(exc))
        else:
            said = "now holds" if changed else "already held"
            messages.success(request, f"{person.username} {said}: {', '.join(people.roles_of(person)) or 'no role'}.")
    else:
        messages.error(request, "Choose among the roles offered.")
    return redirect("people")


@require_POST
@admins_only
def person_deactivate(request, pk):
    person = person_of(pk)
    try:
        ended = people.deactivate(person, request.POST.get("reason", "").strip()[:200], request.user)
    except people.PeopleError as exc:
        messages.error(request, str(exc))
    else:
        if ended is None:
            messages.info(request, f"{person.username} was inactive already.")
        else:
            messages.success(
                request, f"Deactivated {person.username}: their sessions, keys, tokens and grants stopped at once."
            )
    return redirect("people")


@require_POST
@admins_only
def person_reactivate(request, pk):
    person = person_of(pk)
    try:
        reactivated = people.reactivate(person, request.user)
    except people.PeopleError as exc:
        messages.error(request, str(exc))
    else:
        if reactivated:
            messages.success(request, f"Reactivated {person.username}: what was revoked stays revoked.")
        else:
            messages.info(request, f"{person.username} was active already.")
    return redirect("people")
